import type { LeaseState } from './lease-state.js'


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
}

/** What a primitive's operations supply to their leases: the Redis side of extend and release. */
export interface LeaseDriver {
  /** Resolves true when extended, false when Redis says this lease no longer holds the lock. */
  extend(lease: LeaseState, ttl: number): Promise<boolean>
  /** Resolves true when this call released the lock, false when it was no longer held. */
  release(lease: LeaseState): Promise<boolean>
  /** Safety margin subtracted from every validity window (clock drift between client and Redis). */
  drift(ttl: number): number
  /** Longest ttl this driver accepts (quorum mode bounds it by `maxTtl`). */
  readonly maxTtl: number
  /** Ttls below the 100 ms floor are accepted (`allowShortTtl`). */
  readonly allowShortTtl: boolean
  /** The lease is settled (released or lost): forget it. */
  settled(lease: LeaseState): void
}

export interface LeaseInit {
  resource: string
  token: string
  fence: number
  ttl: number
  /** performance.now() taken before the acquire request was sent. */
  start: number
  autoExtend: boolean
}


export { LeaseState } from './lease-state.js'

/**
 * A `Lease` that reads everything from `lease` (its getters run on it: they read private state),
 * with some members replaced: a reentered handle, a lease of several resources.
 */
export function delegatingLease<Extra extends object>(lease: Lease, overrides: Partial<Pick<Lease, 'remaining' | 'held' | 'release' | typeof Symbol.asyncDispose>> & Extra): Lease & Extra {
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
    [Symbol.asyncDispose]: () => lease[Symbol.asyncDispose](),
  }
  return Object.defineProperties(view, Object.getOwnPropertyDescriptors(overrides)) as Lease & Extra
}
