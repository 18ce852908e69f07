/**
 * Every error fencelock throws is a `FencelockError` with a stable `code`, so callers can branch
 * on `err.code` (or `instanceof`) without parsing messages.
 */
export type FencelockErrorCode =
  | 'INVALID_ARGUMENT'
  | 'LOCK_TIMEOUT'
  | 'LOCK_LOST'
  | 'LOCK_ABORTED'
  | 'LOCKS_CLOSED'
  | 'CLIENT_CLOSED'
  | 'REDIS_ERROR'
  | 'QUORUM_FAILED'
  | 'REPLICATION_FAILED'
  | 'LOCK_REENTRY'
  | 'WRONG_TYPE'
  | 'MISSING_DEPENDENCY'
  | 'SERVER_UNSUPPORTED'

/**
 * The base class of every error fencelock throws or rejects with. `name` is the subclass's name
 * (`LockTimeoutError`, ...), `code` a stable {@link FencelockErrorCode} to branch on, and `cause`
 * the underlying error (the Redis client's, the abort reason) where there is one. Test
 * `err instanceof FencelockError` to tell fencelock's failures from the errors of your own code.
 */
export class FencelockError extends Error {
  /** Stable machine-readable code; it never changes for a given kind of failure. */
  readonly code: FencelockErrorCode
  constructor(code: FencelockErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    this.name = new.target.name
  }
}

/** A value passed to fencelock is out of range or of the wrong type. Thrown before any Redis call. */
export class InvalidArgumentError extends FencelockError {
  constructor(message: string) {
    super('INVALID_ARGUMENT', message)
  }
}

/**
 * An optional peer dependency is missing: `fencelock/otel` was imported without
 * `@opentelemetry/api` installed (only that entry needs it). Thrown while the entry loads, so
 * importing `fencelock/otel` rejects with it (ESM) or `require` throws it (CommonJS).
 */
export class MissingDependencyError extends FencelockError {
  /** The package to install. */
  readonly dependency: string
  constructor(dependency: string, message: string, cause: unknown) {
    super('MISSING_DEPENDENCY', message, { cause })
    this.dependency = dependency
  }
}

/** `acquire` waited its whole `wait` budget without getting the lock. */
export class LockTimeoutError extends FencelockError {
  /** The resource that could not be had (a semaphore's or read/write lock's name). */
  readonly resource: string
  /** How long the caller waited, in ms (about its `wait`). */
  readonly waited: number
  constructor(resource: string, waited: number, options?: { cause?: unknown }) {
    super('LOCK_TIMEOUT', `Timed out after ${Math.round(waited)} ms waiting for lock "${resource}"`, options)
    this.resource = resource
    this.waited = waited
  }
}

/** Why a lease was lost: see {@link LockLostError}. */
export type LockLostReason = 'expired' | 'refused' | 'unreachable' | 'closed' | 'revoked'

/**
 * The lease can no longer be trusted. `reason` says what happened:
 * - `unreachable`: no reply from Redis before the deadline: a renewal was sent (or queued by the
 *   client) and nothing came back, or it failed (connection lost, WAIT short of replicas; `cause`
 *   says which); in quorum mode, a majority could not be confirmed because nodes did not answer.
 * - `refused`: Redis answered that this lease no longer holds the lock (taken, expired there, gone).
 * - `expired`: the deadline passed while Redis answered, but no extension was done in time: none
 *   was asked for (no `autoExtend`, a blocked event loop), or its reply came after the new ttl.
 * - `closed`: `locks.close()` was called.
 * - `revoked`: an operator (or another process) revoked it (`locks.revoke`, `fencelock release
 *   --force`): the lock was ended in Redis and this process was told at once.
 * - `released`: only from `extend()` on a lease this process released itself (its signal never
 *   aborts with it).
 */
export class LockLostError extends FencelockError {
  /** The resource whose lease was lost. */
  readonly resource: string
  /** Why: `expired`, `refused`, `unreachable`, `closed` or `revoked` (the signal's); `released` from `extend()` after `release()`. */
  readonly reason: LockLostReason | 'released'
  constructor(resource: string, reason: LockLostReason | 'released', options?: { cause?: unknown }) {
    super(
      'LOCK_LOST',
      reason === 'released'
        ? `Lock "${resource}" was released by this lease: a released lease cannot be extended`
        : `Lost lock "${resource}": ${lostText[reason]}`,
      options,
    )
    this.resource = resource
    this.reason = reason
  }
}

const lostText: Record<LockLostReason, string> = {
  expired: 'its deadline passed without a successful extension',
  refused: 'Redis reports that it is no longer held by this lease',
  unreachable: 'Redis did not answer before the deadline (no reply, or the call failed)',
  closed: 'the locks instance was closed',
  revoked: 'it was revoked (ended in Redis by locks.revoke or `fencelock release --force`)',
}

/** The caller's `AbortSignal` fired while waiting; `cause` is the signal's reason. */
export class LockAbortedError extends FencelockError {
  /** The resource that was being waited for. */
  readonly resource: string
  constructor(resource: string, cause: unknown) {
    super('LOCK_ABORTED', `Aborted while waiting for lock "${resource}"`, { cause })
    this.resource = resource
  }
}

/** The `createLocks` instance was closed (`locks.close()`), or the Redis client was closed. */
export class ClosedError extends FencelockError {
  constructor(code: 'LOCKS_CLOSED' | 'CLIENT_CLOSED', message: string) {
    super(code, message)
  }
}

/** Redis failed or did not answer; `cause` holds the client's error when there was one. */
export class RedisError extends FencelockError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('REDIS_ERROR', message, options)
  }
}

/** What one node of a quorum answered to one attempt. */
export interface NodeVote {
  /** Index of the node in the `redis` array given to `createLocks`. */
  readonly node: number
  /**
   * `acquired`: the lock was taken there; `held`: another lease holds it there; `restarting`: the
   * node came back (empty) less than `maxTtl` ago and does not count yet; `timeout`: no reply
   * within the node timeout; `error`: the node replied with an error or the connection failed;
   * `replied`: the node answered (release, inspect).
   */
  readonly outcome: 'acquired' | 'held' | 'restarting' | 'timeout' | 'error' | 'replied'
  /** The client's error, for `error` (and `timeout`, the timeout itself). */
  readonly cause?: unknown
  /** For `restarting`: ms until the node counts towards a majority again. */
  readonly countsIn?: number
}

/** Fewer than a majority of the quorum's nodes could be reached; `votes` says what each node did. */
export class QuorumError extends FencelockError {
  /** The resource of the failed operation. */
  readonly resource: string
  /** One vote per node, in the order of the `redis` array: what each node answered. */
  readonly votes: readonly NodeVote[]
  /** Nodes that had to agree: a majority of the quorum. */
  readonly needed: number
  constructor(resource: string, action: string, votes: readonly NodeVote[], needed: number) {
    const text = votes
      .map(
        (v) =>
          `#${v.node} ${v.outcome}${v.countsIn !== undefined ? ` (counts in ${Math.ceil(v.countsIn)} ms)` : ''}${v.cause instanceof Error ? ` (${v.cause.message})` : ''}`,
      )
      .join(', ')
    const restarting = votes.some((v) => v.outcome === 'restarting')
      ? '. Nodes that started or restarted less than maxTtl ago do not count until maxTtl has passed (they may have lost locks that are still held elsewhere)'
      : ''
    super('QUORUM_FAILED', `Could not ${action} lock "${resource}" on a majority (${needed} of ${votes.length} nodes): ${text}${restarting}`, {
      cause: votes.find((v) => v.cause !== undefined)?.cause,
    })
    this.resource = resource
    this.votes = votes
    this.needed = needed
  }
}

/**
 * The call chain that asks for a lock already holds it (inside its `withLock`, `withLocks`,
 * `withRead`, `withWrite` or `withPermit`), and re-entering is not allowed: the instance is not
 * `reentrant`, or it asks for a write lease inside its own read lease. Waiting would be waiting
 * for itself.
 */
export class LockReentryError extends FencelockError {
  /** The resource (or semaphore's or read/write lock's name) the call chain already holds; the first one, for `acquireAll`. */
  readonly resource: string
  constructor(resource: string, message?: string) {
    super(
      'LOCK_REENTRY',
      message ??
        `Lock "${resource}" is already held by this call chain (an enclosing withLock); waiting for it would wait for itself. Use the outer lease, or createLocks({ reentrant: true })`,
    )
    this.resource = resource
  }
}

/** `WAIT` saw fewer replicas acknowledge the lock write than `replicas.count` asked for; the lock was released. */
export class ReplicationError extends FencelockError {
  /** The resource whose acquire or extension was not replicated in time. */
  readonly resource: string
  /** Replicas that acknowledged within `replicas.timeout`. */
  readonly acknowledged: number
  /** Replicas that had to acknowledge (`replicas.count`). */
  readonly required: number
  constructor(resource: string, acknowledged: number, required: number, action = 'acquire') {
    super('REPLICATION_FAILED', `Only ${acknowledged} of ${required} required replicas acknowledged the ${action} of lock "${resource}" in time`)
    this.resource = resource
    this.acknowledged = acknowledged
    this.required = required
  }
}

/** The oldest server fencelock's scripts run on: Redis 6.2 (`SET ... GET`, `ZADD ... LT`, `GETDEL`). */
export const MIN_SERVER = '6.2.0'

/**
 * The Redis (or Valkey) server is older than fencelock needs (Redis 6.2): its scripts use
 * commands and options that older servers refuse (`SET ... GET`, `ZADD ... LT`). Nothing was
 * changed. `cause` is the server's own refusal.
 */
export class ServerVersionError extends FencelockError {
  /** The server's version as INFO server reports it (`redis_version`, or `valkey_version`). */
  readonly version: string
  /** The oldest version that works: `6.2.0`. */
  readonly required: string
  constructor(server: string, version: string, options?: { cause?: unknown }) {
    super(
      'SERVER_UNSUPPORTED',
      `${server} ${version} is too old for fencelock: it needs Redis ${MIN_SERVER.replace(/\.0$/, '')} or newer (or Valkey 7.2 or newer), whose scripts may use SET ... GET and ZADD ... LT`,
      options,
    )
    this.version = version
    this.required = MIN_SERVER
  }
}

/**
 * `fencedSet` or `claimFence` found a key holding something it must not overwrite: the data key
 * holds another type than a string (a list, a hash, ...), or the guard key holds anything but a
 * fence. Nothing was changed: the script checks before it writes.
 */
export class KeyTypeError extends FencelockError {
  /** The key that holds the other value: the data key, or its guard key (`key` + `:fence`). */
  readonly key: string
  /**
   * What the key holds, as Redis' `TYPE` names it (`list`, `hash`, `set`, `zset`, `stream`;
   * `string` for a guard that is not a fence), or `unknown` when the Redis user may not run `TYPE`.
   */
  readonly type: string
  constructor(key: string, type: string, message: string) {
    super('WRONG_TYPE', message)
    this.key = key
    this.type = type
  }
}
