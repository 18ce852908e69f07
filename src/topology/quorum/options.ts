import { InvalidArgumentError } from '../../errors/errors.js'
import { checkOptions, checkTtl, describeValue, optionNames } from '../../util/validate.js'

/** Options of quorum mode (`createLocks({ redis: [...], quorum })`). */
export interface QuorumOptions {
  /** Per-node timeout of each request in ms. Default: a tenth of the ttl, from 10 to 1,000 ms. */
  nodeTimeout?: number
}

/** `createLocks({ replicas })`: how many replicas must acknowledge each acquisition and extension (WAIT). */
export interface ReplicasOptions {
  /** Replicas that must acknowledge. */
  count: number
  /** How long WAIT may block, in ms. */
  timeout: number
}

const QUORUM_OPTIONS = optionNames<QuorumOptions>('createLocks `quorum`', { nodeTimeout: true })
const REPLICAS_OPTIONS = optionNames<ReplicasOptions>('createLocks `replicas`', { count: true, timeout: true })

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

export function checkReplicas(options: unknown): { count: number; timeout: number } {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError(`Expected \`replicas\` to be an object { count, timeout }, got ${describeValue(options)}`)
  }
  checkOptions(options, REPLICAS_OPTIONS, 'replicas')
  const { count, timeout } = options as { count?: unknown; timeout?: unknown }
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 1_000) {
    throw new InvalidArgumentError(`Expected \`replicas.count\` to be an integer from 1 to 1000, got ${describeValue(count)}`)
  }
  return { count, timeout: checkTtl(timeout, 'replicas.timeout') }
}
