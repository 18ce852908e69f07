// What a semaphore's lease token says (its slots) and what `inspect` shows of the permits: the
// nodes' views merged.
import type { ReplyOf } from '../../lua/binding.js'
import type { semaphoreInspect } from '../../lua/embedded.js'
import type { HolderInfo } from '../../topology/backend.js'
import { mergeHolder, readLockValue, toNumber } from '../decode.js'

/** One lease that holds permits of a semaphore: its token, remaining ttl, permits, and who holds it since when (see `HolderInfo`). */
export interface PermitHolder extends HolderInfo {
  /** The lease's token. */
  readonly token: string
  /** Its remaining ttl in ms. */
  readonly ttl: number
  /** How many permits it holds (1 unless acquired with `permits: n`). */
  readonly permits: number
}

/** What `semaphore.inspect()` shows. */
export interface SemaphoreInfo {
  /** The semaphore's name, as given. */
  readonly name: string
  /** The limit the permits now held were taken under (this handle's when none is held). */
  readonly limit: number
  /** Permits held now (a lease of n permits counts n). */
  readonly held: number
  /** Each lease that holds permits: its token, remaining ttl in ms, how many permits it holds, and who holds it since when. */
  readonly permits: readonly PermitHolder[]
  /** The last fence handed out for this semaphore, or null if none is kept. */
  readonly fence: number | null
  /** Waiters queued in Redis (one per waiting process). */
  readonly waiters: number
}

/** A lease's token names its slots: `<random token>@<slot>`, or `@<slot>,<slot>,...` for several permits. */
const SLOT = '@'
export const permitToken = (token: string, slots: string): string => `${token}${SLOT}${slots}`
const SLOTS = /^\d+(,\d+)*$/
export function splitToken(token: string): { base: string; slots: number[] | undefined } {
  const at = token.lastIndexOf(SLOT)
  const part = at === -1 ? '' : token.slice(at + 1)
  return SLOTS.test(part) ? { base: token.slice(0, at), slots: part.split(',').map(Number) } : { base: token, slots: undefined }
}

export type SemaphoreView = ReplyOf<typeof semaphoreInspect>
type Permit = readonly [slot: number, value: string, pttl: number]
/** The nodes' views (one per node that answered) as `inspect` shows them. */
export function mergeViews(name: string, limit: number, views: readonly SemaphoreView[], majority: number): SemaphoreInfo {
  // A lease is a token on a majority of nodes in the same slots; its ttl is how long a majority still has it.
  const bySlots = new Map<string, { pttls: number[]; permits: number; records: HolderInfo[] }>()
  for (const [, , , ...held] of views) {
    const here = new Map<string, { slots: number[]; pttl: number; record: HolderInfo }>()
    for (const [slot, value, pttl] of held as unknown as Permit[]) {
      const record = readLockValue(value)
      const lease = here.get(record.token) ?? { slots: [], pttl: Infinity, record }
      here.set(record.token, lease)
      lease.slots.push(toNumber(slot))
      lease.pttl = Math.min(lease.pttl, toNumber(pttl))
    }
    for (const [token, { slots, pttl, record }] of here) {
      const key = permitToken(token, slots.sort((a, b) => a - b).join(','))
      const seen = bySlots.get(key) ?? { pttls: [], permits: slots.length, records: [] }
      bySlots.set(key, seen)
      seen.pttls.push(pttl)
      seen.records.push(record)
    }
  }
  const permits = [...bySlots]
    .filter(([, { pttls }]) => pttls.length >= majority)
    .map(([token, { pttls, permits, records }]) => ({ token, ttl: pttls.sort((a, b) => b - a)[majority - 1]!, permits, ...mergeHolder(records, majority) }))
  const fences = views.flatMap(([, f]) => (f == null ? [] : [Number(f)]))
  const stored = views.map(([l]) => l).find((l) => l != null)
  return {
    name,
    limit: stored == null ? limit : toNumber(stored),
    held: permits.reduce((sum, p) => sum + p.permits, 0),
    permits,
    fence: fences.length > 0 ? Math.max(...fences) : null,
    waiters: Math.max(0, ...views.map(([, , w]) => toNumber(w))),
  }
}
