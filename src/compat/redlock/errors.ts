/**
 * node-redlock's error types, with their names and messages: code that tells failures apart by
 * `instanceof`, `name` or message keeps working after the import change. `cause`: fencelock's own
 * error behind it (a `LockTimeoutError`, a `QuorumError` with a vote per node, a `RedisError`).
 */

/** node-redlock v4's error: the lock could not be taken, extended or released. `attempts`: attempts sent. */
export class LockError extends Error {
  override name = 'LockError'
  readonly attempts: number
  constructor(message?: string, attempts = 0, options?: { cause?: unknown }) {
    super(message || 'Failed to lock the resource.', options)
    this.attempts = attempts
  }
}

/** What one attempt of node-redlock v5 counted: the nodes, the majority, and each node's vote. */
export interface ExecutionStats {
  readonly membershipSize: number
  readonly quorumSize: number
  readonly votesFor: Set<unknown>
  readonly votesAgainst: Map<unknown, Error>
}

/** What v5's `release` resolves with (and what a lock's `attempts` hold). */
export interface ExecutionResult {
  attempts: readonly Promise<ExecutionStats>[]
  start: number
}

/** node-redlock v5's error: an operation did not reach a quorum within its retry window. */
export class ExecutionError extends Error {
  override name = 'ExecutionError'
  readonly attempts: readonly Promise<ExecutionStats>[]
  constructor(message: string, attempts: readonly Promise<ExecutionStats>[], options?: { cause?: unknown }) {
    super(message, options)
    this.attempts = attempts
  }
}

/** node-redlock v5's vote against: another lock holds one or more of the resources. */
export class ResourceLockedError extends Error {
  override name = 'ResourceLockedError'
}

/** The attempt counts of v5's errors and locks: `count` attempts, each with the votes given. */
export function attemptsOf(count: number, stats: () => ExecutionStats): Promise<ExecutionStats>[] {
  return Array.from({ length: count }, () => Promise.resolve(stats()))
}
