import { channel, type Channel } from 'node:diagnostics_channel'

/**
 * Events on `node:diagnostics_channel`, as undici publishes `undici:request:create`. Nothing is
 * built or sent unless someone subscribes (`hasSubscribers` is checked first): no cost otherwise.
 *
 * - `fencelock:acquire:start`  { kind, resource, ttl, wait }
 * - `fencelock:acquire`        { kind, resource, outcome: 'acquired' | 'timeout' | 'aborted' | 'error', waitedMs, token?, fence?, error? }
 * - `fencelock:extend`         { kind, resource, token, ttl, outcome: 'extended' | 'lost' | 'error', error? }
 * - `fencelock:lost`           { kind, resource, token, fence, reason, heldMs }
 * - `fencelock:release`        { kind, resource, token, fence, released, heldMs }
 * - `fencelock:fenced-write`   { key, fence, accepted, operation: 'fencedSet' | 'claimFence' }
 */
export const events = {
  acquireStart: channel('fencelock:acquire:start'),
  acquire: channel('fencelock:acquire'),
  extend: channel('fencelock:extend'),
  lost: channel('fencelock:lost'),
  release: channel('fencelock:release'),
  fencedWrite: channel('fencelock:fenced-write'),
} as const

/** Publishes `message()` on `event` if anyone listens; the message is only built then. */
export function emit(event: Channel, message: () => object): void {
  if (event.hasSubscribers) event.publish(message())
}
