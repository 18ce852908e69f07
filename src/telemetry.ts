import { channel, type Channel } from 'node:diagnostics_channel'

/**
 * Events on `node:diagnostics_channel`, as undici publishes `undici:request:create`. Nothing is
 * built or sent unless someone subscribes (`hasSubscribers` is checked first): no cost otherwise.
 *
 * - `fencelock:acquire:start`  { kind, resource, ttl, wait } (`wait: 0` for tryAcquire)
 * - `fencelock:acquire`        { kind, resource, outcome: 'acquired' | 'busy' | 'timeout' | 'aborted' | 'error', waitedMs, attempts, contended, token?, fence?, error? }
 * - `fencelock:extend`         { kind, resource, token, ttl, outcome: 'extended' | 'lost' | 'error', error? }
 * - `fencelock:lost`           { kind, resource, token, fence, reason, heldMs }
 * - `fencelock:release`        { kind, resource, token, fence, released, heldMs }
 * - `fencelock:fenced-write`   { key, fence, accepted, operation: 'fencedSet' | 'claimFence' }
 */
export const events = {
  /** `fencelock:acquire:start`: an acquisition (`acquire`, `tryAcquire`, `withLock`, a permit, a read or write lease) begins. */
  acquireStart: channel('fencelock:acquire:start'),
  /** `fencelock:acquire`: that acquisition ended: acquired (with token and fence), busy (`tryAcquire` got null), timed out, aborted or failed. */
  acquire: channel('fencelock:acquire'),
  /** `fencelock:extend`: an extension (automatic or `lease.extend`) ended: extended, lost or failed. */
  extend: channel('fencelock:extend'),
  /** `fencelock:lost`: a lease was lost; its signal aborts with `LockLostError` of the same `reason`. */
  lost: channel('fencelock:lost'),
  /** `fencelock:release`: a lease was released; `released` is false when it was already gone. */
  release: channel('fencelock:release'),
  /** `fencelock:fenced-write`: `fencedSet` or `claimFence` ran; `accepted` is false for a stale fence. */
  fencedWrite: channel('fencelock:fenced-write'),
} as const

/** Publishes `message()` on `event` if anyone listens; the message is only built then. */
export function emit(event: Channel, message: () => object): void {
  if (event.hasSubscribers) event.publish(message())
}
