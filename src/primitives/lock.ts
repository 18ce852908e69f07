import type { LockInfo } from '../topology/backend.js'
import type { Exec, ReplyOf } from '../lua/binding.js'
import { mutexInspect } from '../lua/embedded.js'
import { mergeHolder, readLockValue, toNumber, type Held } from './decode.js'

// One resource's lock as two kinds share it: the mutex, and the all-or-nothing lock of several
// (multi), whose locks are the mutexes' own keys so that a single-resource acquire of one of them
// queues and waits as usual.

/**
 * Keys of one mutex. They all share the hash tag `{resource}`, so every script runs on one Redis
 * Cluster slot. A `}` inside the name only shortens the tag, identically for every key of that
 * resource; the suffixes are distinct single letters right after the tag (other kinds put their
 * own part first, e.g. `:S:`), so two resources or kinds never share a key.
 */
export interface MutexKeys {
  readonly lock: string
  readonly fence: string
  readonly queue: string
  readonly queueExpiry: string
  readonly channel: string
}

export function mutexKeys(prefix: string, resource: string): MutexKeys {
  const base = `${prefix}{${resource}}:`
  return { lock: `${base}L`, fence: `${base}F`, queue: `${base}Q`, queueExpiry: `${base}X`, channel: `${base}W` }
}

/** What mutex-inspect.lua answers on one node. */
export type LockView = ReplyOf<typeof mutexInspect>

export const inspectLock = (exec: Exec, k: MutexKeys): Promise<LockView> => mutexInspect.run(exec, [k.lock, k.fence, k.queue, k.queueExpiry], [])

/** The nodes' views of one lock (one per node that answered) as `inspect` shows it. */
export function mergeLock(resource: string, views: readonly LockView[], majority: number): LockInfo {
  // Held = one token on a majority; its ttl is how long a majority still has it.
  const byToken = new Map<string, { pttls: number[]; records: Held[] }>()
  for (const [value, pttl] of views) {
    if (typeof value !== 'string') continue
    const record = readLockValue(value)
    const seen = byToken.get(record.token) ?? { pttls: [], records: [] }
    byToken.set(record.token, seen)
    seen.pttls.push(toNumber(pttl))
    seen.records.push(record)
  }
  const held = [...byToken].find(([, { pttls }]) => pttls.length >= majority)
  const fences = views.flatMap(([, , f]) => (f == null ? [] : [Number(f)]))
  return {
    resource,
    held: held !== undefined,
    token: held ? held[0] : null,
    fence: fences.length > 0 ? Math.max(...fences) : null,
    ttl: held ? held[1].pttls.sort((a, b) => b - a)[majority - 1]! : null,
    waiters: Math.max(0, ...views.map(([, , , w]) => toNumber(w))),
    ...mergeHolder(held ? held[1].records : [], majority),
  }
}
