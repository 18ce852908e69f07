import type { WakeSource } from '../backend.js'
import { parseWake } from '../wake-message.js'

/**
 * Wake-ups from every node of a quorum: a release on any node publishes the next waiter's id there.
 * `listen` resolves once a majority of nodes acknowledged SUBSCRIBE (a dead node's subscribe may
 * hang in its client's offline queue; the remaining nodes still deliver every release that a
 * majority took part in), and rejects only if that can no longer happen.
 */
export function quorumWake(sources: readonly WakeSource[], majority: number, heard: (message: string) => void): WakeSource {
  // A release runs on every node and each one publishes the next waiter's id. Waking on the first
  // copy sends the waiter in while the other nodes still hold the old lock (their release has not
  // landed yet): the attempt fails, and may have to wait for a dead node's timeout to know it.
  // So a wake-up is delivered once a majority of nodes have published it. Copies of one release
  // arrive within milliseconds: the rest of them (up to ABSORB_MS after the delivery) are dropped,
  // later ones start a new count; a count that never reaches a majority is forgotten after
  // WINDOW_MS. A release that a majority did not see wakes nobody: the waiter's re-check timer
  // (the holder's ttl) covers it.
  // `heard` sees each delivered wake-up first: one that arrives while the waiter's attempt still
  // waits for its slowest node would otherwise be lost (see backend.ts).
  const WINDOW_MS = 1_000
  const ABSORB_MS = 100
  // One wrapper per listener and node: copies are counted by the nodes that sent them, since one
  // node can publish the same waiter twice (a lock of several resources, released at once). Held
  // weakly: a listener (one per waiting resource) may listen on several channels, and its wrappers
  // go when it does, after its last unlisten (a Map kept every wait's wrappers for good).
  const wrapped = new WeakMap<(message: string) => void, ((message: string) => void)[]>()
  const tap = (listener: (message: string) => void): ((message: string) => void)[] => {
    let perNode = wrapped.get(listener)
    if (!perNode) {
      const copies = new Map<string, { nodes: Set<number>; first: number; delivered: number }>()
      const heardFrom = (message: string, node: number) => {
        const now = performance.now()
        for (const [m, c] of copies) if (now - (c.delivered || c.first) > (c.delivered ? ABSORB_MS : WINDOW_MS)) copies.delete(m)
        // Copies are counted by the woken waiter (the first id): the standby named after it (see
        // mutex-release.lua) may differ from node to node.
        const head = parseWake(message).next
        let entry = copies.get(head)
        if (entry?.delivered) {
          // A late copy of the release already delivered, from a node that had not sent it yet:
          // absorbed. A node that sent one already is publishing a new release (another resource
          // of an all-or-nothing waiter): that one counts afresh.
          if (!entry.nodes.has(node)) return void entry.nodes.add(node)
          entry = undefined
        }
        entry ??= { nodes: new Set<number>(), first: now, delivered: 0 }
        copies.set(head, entry)
        entry.nodes.add(node)
        if (entry.nodes.size < majority) return
        entry.delivered = now
        heard(head)
        listener(message)
      }
      perNode = sources.map((_, node) => (message: string) => heardFrom(message, node))
      wrapped.set(listener, perNode)
    }
    return perNode
  }
  return {
    retain: () => sources.forEach((s) => s.retain()),
    release: async () => void (await Promise.allSettled(sources.map((s) => s.release()))),
    listen(channel, original) {
      const listeners = tap(original)
      return new Promise<number>((resolve, reject) => {
        let ok = 0
        let failed = 0
        let since = 0
        let lastError: unknown
        for (const [node, source] of sources.entries()) {
          source.listen(channel, listeners[node]!).then(
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
      const listeners = wrapped.get(original)
      if (!listeners) return
      sources.forEach((s, node) => s.unlisten(channel, listeners[node]!))
    },
    onResync(listener) {
      const offs = sources.map((s) => s.onResync(listener))
      return () => offs.forEach((off) => off())
    },
  }
}
