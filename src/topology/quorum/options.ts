import { InvalidArgumentError } from '../../errors/errors.js'
import { checkOptions, checkTtl, describeValue, optionNames } from '../../util/validate.js'

/** Options of quorum mode (`createLocks({ redis: [...], quorum })`). */
export interface QuorumOptions {
  /** Per-node timeout of each request in ms. Default: a tenth of the ttl, from 10 to 1,000 ms. */
  nodeTimeout?: number
}

const QUORUM_OPTIONS = optionNames<QuorumOptions>('createLocks `quorum`', { nodeTimeout: true })

/** The per-node timeout for a given ttl: fixed if the caller chose one, else a tenth of the ttl (10 to 1,000 ms). */
export function quorumNodeTimeout(options: unknown): (ttl: number) => number {
  if (options === undefined) return defaultNodeTimeout
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError(`Expected \`quorum\` to be an object, got ${describeValue(options)}`)
  }
  checkOptions(options, QUORUM_OPTIONS, 'quorum')
  const { nodeTimeout } = options as { nodeTimeout?: unknown }
  if (nodeTimeout === undefined) return defaultNodeTimeout
  const fixed = checkTtl(nodeTimeout, 'quorum.nodeTimeout')
  return () => fixed
}

const defaultNodeTimeout = (ttl: number): number => Math.max(10, Math.min(1_000, Math.floor(ttl / 10)))
