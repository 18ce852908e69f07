import type { WakeSource } from '../backend.js'

/**
 * Wake-ups from every node of a quorum: a release on any node publishes the next waiter's id there.
 * `listen` resolves once a majority of nodes acknowledged SUBSCRIBE (a dead node's subscribe may
 * hang in its client's offline queue; the remaining nodes still deliver every release that a
 * majority took part in), and rejects only if that can no longer happen.
 */
export function quorumWake(sources: readonly WakeSource[], majority: number, heard: (message: string) => void): WakeSource {
  // `heard` sees every message first: a wake-up that arrives while the waiter's attempt still
  // waits for the slowest node would otherwise be lost (see backend.ts).
  const wrapped = new Map<(message: string) => void, (message: string) => void>()
  const tap = (listener: (message: string) => void) => {
    let w = wrapped.get(listener)
    if (!w) {
      w = (message) => {
        heard(message)
        listener(message)
      }
      wrapped.set(listener, w)
    }
    return w
  }
  return {
    retain: () => sources.forEach((s) => s.retain()),
    release: async () => void (await Promise.allSettled(sources.map((s) => s.release()))),
    listen(channel, original) {
      const listener = tap(original)
      return new Promise<number>((resolve, reject) => {
        let ok = 0
        let failed = 0
        let since = 0
        let lastError: unknown
        for (const source of sources) {
          source.listen(channel, listener).then(
            (at) => {
              // Heard from the moment the majority's last subscription became active.
              since = Math.max(since, at)
              if (++ok === majority) resolve(since)
            },
            (err: unknown) => {
              lastError = err
              if (++failed > sources.length - majority) reject(lastError)
            },
          )
        }
      })
    },
    unlisten(channel, original) {
      const listener = wrapped.get(original)
      if (!listener) return
      sources.forEach((s) => s.unlisten(channel, listener))
    },
    onResync(listener) {
      const offs = sources.map((s) => s.onResync(listener))
      return () => offs.forEach((off) => off())
    },
  }
}
