import { LockLostError, type FencelockError } from '../errors/errors.js'

/**
 * A held lock, semaphore permit, or any other grant: every primitive hands back this one type.
 * Its `signal` aborts with `LockLostError` the moment the lease can no longer be trusted; its
 * `deadline` is on the local monotonic clock (`performance.now()`), counted from before the acquire
 * (or last extend) request was sent, minus the drift margin, so it never ends later than the
 * grant's expiry in Redis.
 */
export interface Lease extends AsyncDisposable {
  /** The locked resource's name (a semaphore's name for a permit). */
  readonly resource: string
  /** Random owner token; only this lease can extend or release the grant (a permit's names its slot). */
  readonly token: string
  /** Fencing token: strictly larger than every earlier acquisition's fence of this resource. */
  readonly fence: number
  /** Aborts with `LockLostError` when the lease is lost. Pass it to the work the lock protects. */
  readonly signal: AbortSignal
  /** `performance.now()` value after which the lease must be treated as lost. */
  readonly deadline: number
  /** Milliseconds of validity left (0 once lost or released). */
  readonly remaining: number
  /** True while the lease is held and inside its deadline. */
  readonly held: boolean
  /** The ttl of the last acquire or extend. */
  readonly ttl: number
  /**
   * Pushes the expiry to `ttl` ms from now (default: the last ttl). Rejects with `LockLostError`
   * if the lease was lost (the signal aborts too), or `RedisError` if Redis did not answer; in that
   * case the lease stays valid until its current deadline.
   */
  extend(ttl?: number): Promise<void>
  /**
   * Releases. Resolves true if this call released it, false if the lease had already been lost
   * (and the grant was gone) or released. Rejects with `RedisError` only if Redis failed or did
   * not answer within the lease's remaining validity (at least a second, or the ttl if shorter).
   */
  release(): Promise<boolean>
  /**
   * Calls `listener` each time an extension of this lease fails while it is still held (Redis did
   * not answer, the connection failed, WAIT fell short): the lease is at risk, and ends at its
   * deadline unless a later extension succeeds. `remaining` is the validity left then (ms), `error`
   * the extension's `RedisError`. Heard before the loss, so that work can stop or hand over in
   * time; `fencelock:at-risk` reports the same. Returns a function that stops the calls.
   */
  onAtRisk(listener: (risk: LeaseRisk) => void): () => void
  /**
   * `await using`: releases at the end of the block, and throws the lease's `LockLostError` if it
   * was lost before (the work ran unprotected); with the block's own error, both in a
   * `SuppressedError`. A failed release of a lease still held is not thrown (it expires at its ttl).
   */
  [Symbol.asyncDispose](): Promise<void>
}

/** What `Lease.onAtRisk` reports: the validity left (ms) and why the extension failed. */
export interface LeaseRisk {
  /** Validity left when the extension failed, in ms (the lease's `remaining` then). */
  readonly remaining: number
  /** Why: the extension's `RedisError` (its `cause` is the client's error), or the no-reply error of a renewal left unanswered. */
  readonly error: FencelockError
}

/**
 * A `Lease` that reads everything from `lease` (its getters run on it: they read private state),
 * with some members replaced: a reentered handle, a lease of several resources, one resource of it.
 */
export function delegatingLease<Extra extends object>(
  lease: Lease,
  overrides: Partial<Pick<Lease, 'resource' | 'fence' | 'remaining' | 'held' | 'release' | typeof Symbol.asyncDispose>> & Extra,
): Lease & Extra {
  const view = {
    get resource() {
      return lease.resource
    },
    get token() {
      return lease.token
    },
    get fence() {
      return lease.fence
    },
    get signal() {
      return lease.signal
    },
    get deadline() {
      return lease.deadline
    },
    get remaining() {
      return lease.remaining
    },
    get held() {
      return lease.held
    },
    get ttl() {
      return lease.ttl
    },
    extend: (ttl?: number) => lease.extend(ttl),
    release: () => lease.release(),
    onAtRisk: (listener: (risk: LeaseRisk) => void) => lease.onAtRisk(listener),
    [Symbol.asyncDispose]: () => lease[Symbol.asyncDispose](),
  }
  return Object.defineProperties(view, Object.getOwnPropertyDescriptors(overrides)) as Lease & Extra
}

/** The loss of a lease that is no longer held: its signal's LockLostError, or 'expired' if the deadline passed before the signal could abort. */
export function lossOf(lease: Lease): LockLostError | undefined {
  if (lease.held) return undefined
  return lease.signal.reason instanceof LockLostError ? lease.signal.reason : new LockLostError(lease.resource, 'expired')
}

/**
 * Runs `fn(lease)` and releases the lease whatever happens: a release that fails leaves the lock to
 * expire at its ttl and never replaces `fn`'s outcome. If the lease was lost before `fn` finished,
 * throws that loss instead of returning `fn`'s value: the work did not run under the lock all along.
 */
export async function holding<L extends Lease, T>(
  lease: L,
  fn: (lease: L) => Promise<T> | T,
  loss: (lease: L) => LockLostError | undefined = lossOf,
): Promise<T> {
  let result: T
  let lost: LockLostError | undefined
  try {
    result = await fn(lease)
  } finally {
    lost = loss(lease)
    await lease.release().catch(() => {})
  }
  if (lost) throw lost
  return result
}
