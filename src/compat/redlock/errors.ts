/**
 * node-redlock's error types, with their names and messages: code that tells failures apart by
 * `instanceof`, `name` or message keeps working after the import change. `cause`: fencelock's own
 * error behind it (a `LockTimeoutError`, a `QuorumError` with a vote per node, a `RedisError`).
 */

/** node-redlock v4's error: the lock could not be taken, extended or released. `attempts`: attempts sent. */
export class LockError extends Error {
  /** `'LockError'`, as node-redlock's. */
  override name = 'LockError'
  /** How many attempts were sent before the operation gave up (0 when none was). */
  readonly attempts: number
  constructor(message?: string, attempts = 0, options?: { cause?: unknown }) {
    super(message || 'Failed to lock the resource.', options)
    this.attempts = attempts
  }
}

/** What one attempt of node-redlock v5 counted: the nodes, the majority, and each node's vote. */
export interface ExecutionStats {
  /** How many nodes (independent Redis masters) the Redlock instance runs on. */
  readonly membershipSize: number
  /** How many of them must agree: a majority, `floor(membershipSize / 2) + 1`. */
  readonly quorumSize: number
  /** The nodes that voted for the operation. */
  readonly votesFor: Set<unknown>
  /** The nodes that voted against it, each with its reason (a `ResourceLockedError`, or the node's error). */
  readonly votesAgainst: Map<unknown, Error>
}

/** What v5's `release` resolves with (and what a lock's `attempts` hold). */
export interface ExecutionResult {
  /** One promise per attempt sent, each resolving with that attempt's votes. */
  attempts: readonly Promise<ExecutionStats>[]
  /** When the operation started, in ms since the epoch (the wall clock, as node-redlock's). */
  start: number
}

/** node-redlock v5's error: an operation did not reach a quorum within its retry window. */
export class ExecutionError extends Error {
  /** `'ExecutionError'`, as node-redlock's. */
  override name = 'ExecutionError'
  /** One promise per attempt sent, each resolving with that attempt's votes. */
  readonly attempts: readonly Promise<ExecutionStats>[]
  constructor(message: string, attempts: readonly Promise<ExecutionStats>[], options?: { cause?: unknown }) {
    super(message, options)
    this.attempts = attempts
  }
}

/** node-redlock v5's vote against: another lock holds one or more of the resources. */
export class ResourceLockedError extends Error {
  /** `'ResourceLockedError'`, as node-redlock's. */
  override name = 'ResourceLockedError'
}

/** The attempt counts of v5's errors and locks: `count` attempts, each with the votes given. */
export function attemptsOf(count: number, stats: () => ExecutionStats): Promise<ExecutionStats>[] {
  return Array.from({ length: count }, () => Promise.resolve(stats()))
}
