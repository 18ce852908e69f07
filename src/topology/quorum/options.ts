/** Options of quorum mode (`createLocks({ redis: [...], quorum })`). */
export interface QuorumOptions {
  /** Per-node timeout of each request in ms. Default: a tenth of the ttl, from 10 to 1,000 ms. */
  nodeTimeout?: number
}

/** The per-node timeout for a given ttl when none is chosen: a tenth of the ttl, from 10 to 1,000 ms. */
export const defaultNodeTimeout = (ttl: number): number => Math.max(10, Math.min(1_000, Math.floor(ttl / 10)))
