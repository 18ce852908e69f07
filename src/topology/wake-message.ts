/**
 * The wake-up message, TypeScript side (the Lua side is `wakeNext` in src/lua/lib/queue.lua):
 * `"<next waiter id>"` or `"<next waiter id> <standby waiter id>"`. A waiter id is
 * `"<instance>:<n>"`, and the message goes to the channel of each named waiter's instance.
 * The next one goes now; the standby looks again once the next one's grace is over, in case it was dead.
 */
export interface WakeMessage {
  readonly next: string
  readonly standby: string | undefined
}

export function parseWake(message: string): WakeMessage {
  const space = message.indexOf(' ')
  return space === -1 ? { next: message, standby: undefined } : { next: message.slice(0, space), standby: message.slice(space + 1) }
}

/** What `message` asks of waiter `id`: go now, look again after a grace, or nothing. */
export function wakeFor(message: string, id: string): 'next' | 'standby' | undefined {
  // No allocation on the hot path: compare in place.
  const space = message.indexOf(' ')
  if (space === -1) return message === id ? 'next' : undefined
  if (space === id.length && message.startsWith(id)) return 'next'
  if (message.length - space - 1 === id.length && message.endsWith(id)) return 'standby'
  return undefined
}
