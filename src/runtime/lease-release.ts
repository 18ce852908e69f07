import type { RedisFailure } from '../errors/redis-failure.js'
import { noReplyError, redisFailure } from '../errors/failures.js'
import { settleWithin } from '../util/alarms.js'
import type { Into } from '../util/into.js'

/** A release sent `left` ms before its lease's deadline, and what its outcome needs of the lease. */
export interface Release {
  readonly resource: string
  readonly left: number
  readonly ttl: number
  /** A lease that `locks.close()` let go of is still in Redis: releasing it is a real release. */
  readonly wasHeld: boolean
  /** `ms` without a reply, with what the client last reported. */
  silence(ms: number): Extract<RedisFailure, { kind: 'no-reply' }>
  /** Redis no longer had the lease that was held (restart with no data, eviction, expiry during the call). */
  gone(): void
  /** Redis answered `released` (also after the caller stopped waiting): the release event, where one is due. */
  readonly answered?: ((released: boolean) => void) | undefined
}

/**
 * The outcome of a release: true if it released a lease that was held. Past its deadline the lease
 * is worthless: a Redis that does not answer (down, paused, offline queue) must not hold the caller
 * (withLock, `await using`) longer than the lease's remaining validity (at least a second, or the
 * ttl if shorter). `send` sends it, its outcome handed to the `Into` it is given.
 */
export function releaseWithin(send: (into: Into<boolean>) => void, release: Release): Promise<boolean> {
  const { resource, left, ttl, wasHeld } = release
  const floor = Math.min(ttl, 1_000)
  const limit = Math.ceil(Math.max(left, floor))
  // Bounded by the deadline, releases come due about in the order they are sent: a lane of
  // their own (ttls are integers: ttl + 0.5 is no other lane), so arming one stays O(1).
  // One promise from the reply (or its silence) to the outcome, on every release.
  return settleWithin<boolean, boolean>(send, limit, left >= floor ? ttl + 0.5 : limit, {
    silent: () => {
      throw noReplyError(release.silence(limit), ` to the release of lock "${resource}"; it expires at its ttl`)
    },
    late: (released) => release.answered?.(released),
    value: (released) => {
      release.answered?.(released)
      if (!released && wasHeld) release.gone()
      return released && wasHeld
    },
    // A FencelockError already says what happened (a quorum's votes, a refused wake-up).
    error: (err: unknown) => {
      throw redisFailure(`release lock "${resource}"`, err)
    },
  })
}
