import { noReplyError, redisFailure, silenceOf } from '../errors/failures.js'
import type { Backend } from '../topology/backend.js'
import { ReplyLimit, type Settle } from '../util/alarms.js'

/** What a release needs of its lease (LeaseState): where it is held, and to hear Redis' answer. */
export interface Releasing {
  readonly resource: string
  readonly token: string
  readonly context: { readonly backend: Pick<Backend<unknown>, 'release' | 'clientError'> }
  /**
   * Redis answered `released`: the release event where one is due (`report`), and a held lease
   * that Redis no longer had (restart with no data, eviction, expiry during the call) was lost
   * before, unless the answer came after the caller stopped waiting (`late`).
   */
  releaseAnswered(released: boolean, wasHeld: boolean, report: boolean, late: boolean): void
}

/** One release's outcome from Redis' answer, its error or its silence: the one object of a release. */
class ReleaseOutcome implements Settle<boolean, boolean> {
  constructor(
    readonly lease: Releasing,
    readonly wasHeld: boolean,
    /** A release event is due (not for a give-back). */
    readonly report: boolean,
    /** The ms it waits for the reply. */
    readonly limit: number,
  ) {}

  value(released: boolean): boolean {
    this.lease.releaseAnswered(released, this.wasHeld, this.report, false)
    return released && this.wasHeld
  }

  /** Redis answered after the caller stopped waiting: the release event, where one is due. */
  late(released: boolean): void {
    this.lease.releaseAnswered(released, this.wasHeld, this.report, true)
  }

  // A FencelockError already says what happened (a quorum's votes, a refused wake-up).
  error(err: unknown): never {
    throw redisFailure(`release lock "${this.lease.resource}"`, err)
  }

  silent(): never {
    throw noReplyError(silenceOf(this.limit, this.lease.context.backend), ` to the release of lock "${this.lease.resource}"; it expires at its ttl`)
  }
}

/**
 * The outcome of a release sent `left` ms before its lease's deadline: true if it released a lease
 * that was held (`wasHeld`; `report`: a release event is due, not for a give-back). Past its
 * deadline the lease is worthless: a Redis that does not answer (down, paused, offline queue) must
 * not hold the caller (withLock, `await using`) longer than the lease's remaining validity (at
 * least a second, or the ttl if shorter).
 */
export function releaseWithin(lease: Releasing, left: number, ttl: number, wasHeld: boolean, report: boolean): Promise<boolean> {
  const floor = Math.min(ttl, 1_000)
  const limit = Math.ceil(Math.max(left, floor))
  // Bounded by the deadline, releases come due about in the order they are sent: a lane of
  // their own (ttls are integers: ttl + 0.5 is no other lane), so arming one stays O(1).
  // One promise from the reply (or its silence) to the outcome, on every release.
  const reply = new ReplyLimit<boolean, boolean>(limit, left >= floor ? ttl + 0.5 : limit, new ReleaseOutcome(lease, wasHeld, report, limit))
  try {
    lease.context.backend.release(lease.resource, lease.token, reply)
  } catch (err) {
    reply.thrown(err)
  }
  return reply.promise
}
