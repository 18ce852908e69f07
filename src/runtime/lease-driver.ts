import type { LeaseState } from './lease-state.js'
import type { LockKind } from '../util/telemetry.js'

/** What a primitive's operations supply to their leases: the Redis side of extend and release. */
export interface LeaseDriver {
  /**
   * Resolves true when extended, false when Redis says this lease no longer holds the lock;
   * rejects with `LockLostError` when it is lost for another certain reason (see `Backend.extend`).
   * `renewal`: an automatic renewal, which may go out in one call with others that fall due with it.
   */
  extend(lease: LeaseState, ttl: number, renewal: boolean): Promise<boolean>
  /** Resolves true when this call released the lock, false when it was no longer held. */
  release(lease: LeaseState): Promise<boolean>
  /** Why Redis does not answer, where the client said so (see `Backend.clientError`). */
  clientError(): Error | undefined
  /** Safety margin subtracted from every validity window (clock drift between client and Redis). */
  drift(ttl: number): number
  /** Longest ttl this driver accepts (quorum mode bounds it by `maxTtl`). */
  readonly maxTtl: number
  /** Ttls below the 100 ms floor are accepted (`allowShortTtl`). */
  readonly allowShortTtl: boolean
  /** The primitive, for telemetry ('mutex', 'semaphore', 'read', 'write', 'multi'). */
  readonly kind: LockKind
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
