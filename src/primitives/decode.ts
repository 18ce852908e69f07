import type { Reply } from '../lua/binding.js'
import type { HolderInfo } from '../topology/backend.js'
import type { NodeFacts, NodeGrant } from '../topology/primitive.js'

// Reply decoding that every kind's scripts share: the release and batch replies have one shape
// for all kinds, and an acquire reply ends with the node's facts when a topology asked for them.

export const toNumber = (value: unknown): number => (typeof value === 'number' ? value : Number(value))

/** A script's 1 (done) or 0 (not done) as a boolean. */
export const isOne = (reply: unknown): boolean => toNumber(reply) === 1

/** A release script's reply: 1, 0, or {1, text of a refused PUBLISH} (see mutex-release.lua). */
export function decodeRelease(reply: 1 | 0 | readonly [code: 1, refusal: Reply]): { released: boolean; refused?: string } {
  if (Array.isArray(reply)) return { released: toNumber(reply[0]) === 1, refused: String(reply[1]) }
  return { released: toNumber(reply) === 1 }
}

/** A batch script's reply (extend-many): one 1 or 0 per lease, in order; anything else is an error. */
export function decodeMany(script: string, reply: unknown, count: number): boolean[] {
  if (!Array.isArray(reply) || reply.length !== count) throw new Error(`${script} answered ${String(reply)} for ${count} leases`)
  return reply.map((r) => toNumber(r) === 1)
}

/**
 * An error one entry of a batch script (acquire-many, release-many) met alone: Redis' error text
 * for it, as the single script's call would have failed with it. Named like the clients' reply
 * errors, so that it counts as permanent or transient exactly as that reply error would.
 */
export class EntryReplyError extends Error {
  override name = 'ReplyError'
}

/**
 * A batch script's reply (acquire-many, release-many): one entry per call, in order, each decoded
 * by `decode` as its single script's reply; an entry {nil, text} (see lib/many.lua) is its error.
 */
// biome-ignore lint/suspicious/noExplicitAny: each caller's decoder takes its script's typed entry; the batch reply is checked entry by entry
export function decodeEntries<T>(script: string, reply: unknown, count: number, decode: (entry: any, i: number) => T): (T | Error)[] {
  if (!Array.isArray(reply) || reply.length !== count) throw new Error(`${script} answered ${String(reply)} for ${count} calls`)
  return reply.map((entry, i) => (Array.isArray(entry) && entry[0] === null ? new EntryReplyError(String(entry[1])) : decode(entry, i)))
}

/** The node's facts at `at` (young, runId, now) of an acquire reply (see withNode in lib/queue.lua). */
export const nodeFacts = (reply: readonly (Reply | undefined)[], at: number): NodeFacts => ({
  young: toNumber(reply[at]),
  runId: String(reply[at + 1]),
  now: toNumber(reply[at + 2]),
})

/**
 * An acquire reply `{code, fence or retry, ...}` as a grant (code 1) or a refusal; `claim`: which
 * part was granted (a semaphore's slot; '' for the others); the node's facts from index `factsAt`
 * when they were asked for. Every kind's decoder ends here, and builds its object field by field:
 * V8 copies a `{ ...grant, node }` spread through a slow generic path, on every attempt.
 */
export function grantOf(reply: readonly (Reply | undefined)[], claim: string, factsAt: number | undefined): NodeGrant {
  const value = toNumber(reply[1])
  if (factsAt === undefined) return toNumber(reply[0]) === 1 ? { granted: true, fence: value, claim } : { granted: false, retry: value }
  const node = nodeFacts(reply, factsAt)
  return toNumber(reply[0]) === 1 ? { granted: true, fence: value, claim, node } : { granted: false, retry: value, node }
}

/** A lock value read back: the lease's token and what Redis records of its holder (see `HolderInfo`). */
export interface Held extends HolderInfo {
  readonly token: string
}

/**
 * A lock value as the scripts write it (lib/lease.lua): `<token> <sinceMs> <extendedMs> <holder>`;
 * a bare token (no space: node-redlock's layout) records nothing else. A reader's facts are the
 * value of token '' (rw-inspect: false where none are kept).
 */
export function readLockValue(value: unknown): Held {
  const m = /^([^ ]*) (\d+) (\d+) (.*)$/s.exec(String(value))
  return m ? { token: m[1]!, since: +m[2]!, lastExtended: +m[3]!, holder: m[4]! } : { token: String(value), holder: null, since: null, lastExtended: null }
}

/**
 * What the nodes that hold one lease for a majority (one on a single Redis) record of its holder,
 * as one: the label; the earliest grant (`since`); and the majority-th latest extension, the time
 * by which a majority had extended it (`lastExtended`), as a merged ttl is how long a majority
 * still holds it.
 */
export function mergeHolder(records: readonly HolderInfo[], majority: number): HolderInfo {
  const times = (pick: (r: HolderInfo) => number | null) => records.flatMap((r) => pick(r) ?? []).sort((a, b) => b - a)
  const since = times((r) => r.since)
  const extended = times((r) => r.lastExtended)
  return {
    holder: records.find((r) => r.holder !== null)?.holder ?? null,
    since: since.at(-1) ?? null,
    lastExtended: extended[Math.min(majority, extended.length) - 1] ?? null,
  }
}
