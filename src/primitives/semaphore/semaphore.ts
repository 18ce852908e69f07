import { InvalidArgumentError } from '../../errors/errors.js'
import { keyCache } from '../../util/keys.js'
import type { Arg, Exec, ReplyOf } from '../../lua/binding.js'
import {
  semaphoreAcquire,
  semaphoreConfirm,
  semaphoreExtend,
  semaphoreExtendMany,
  semaphoreInspect,
  semaphoreLeave,
  semaphoreRelease,
} from '../../lua/embedded.js'
import type { ExtendItem, NodeGrant, Primitive } from '../../topology/primitive.js'
import { decodeMany, decodeRelease, nodeFacts, toNumber } from '../decode.js'

export interface SemaphoreOptions {
  prefix: string
  /** How long the fence key outlives its last use (ms). */
  fenceRetention: number
  /** How long past its next re-check a queued waiter keeps its place (ms). */
  waiterGrace: number
  /** Permits that may be held at once. */
  limit: number
}

/** What `semaphore.inspect()` shows. */
export interface SemaphoreInfo {
  /** The semaphore's name, as given. */
  readonly name: string
  /** The limit the permits now held were taken under (this handle's when none is held). */
  readonly limit: number
  /** Permits held now. */
  readonly held: number
  /** Each held permit: its lease token and remaining ttl in ms. */
  readonly permits: readonly {
    /** The permit's lease token. */
    readonly token: string
    /** Its remaining ttl in ms. */
    readonly ttl: number
  }[]
  /** The last fence handed out for this semaphore, or null if none is kept. */
  readonly fence: number | null
  /** Waiters queued in Redis (one per waiting process). */
  readonly waiters: number
}

/**
 * Keys of one semaphore: the hash tag `{name}` (one cluster slot), then the kind's own part `S:`,
 * so a semaphore and a mutex of the same name never share a key. Each permit is a slot key of its
 * own that expires by the Redis server's clock (PX), never by a client's.
 */
export interface SemaphoreKeys {
  readonly fence: string
  readonly queue: string
  readonly queueExpiry: string
  readonly limit: string
  readonly channel: string
  readonly slots: readonly string[]
}

export function semaphoreKeys(prefix: string, name: string, limit: number): SemaphoreKeys {
  const base = `${prefix}{${name}}:S:`
  return {
    fence: `${base}F`,
    queue: `${base}Q`,
    queueExpiry: `${base}X`,
    limit: `${base}N`,
    channel: `${base}W`,
    slots: Array.from({ length: limit }, (_, i) => `${base}${i}`),
  }
}

/** A permit's lease token names its slot: `<random token>@<slot>`. */
const SLOT = '@'
export const permitToken = (token: string, slot: string): string => `${token}${SLOT}${slot}`
function splitToken(token: string): { base: string; slot: number | undefined } {
  const at = token.lastIndexOf(SLOT)
  const slot = at === -1 ? NaN : Number(token.slice(at + 1))
  return Number.isInteger(slot) ? { base: token.slice(0, at), slot } : { base: token, slot: undefined }
}

/** A semaphore's keys, with the lists its scripts take built once per name (not per call). */
interface Keys extends SemaphoreKeys {
  /** fence, queue, queue expiry, limit, then the slots: what acquire and inspect take. */
  readonly all: readonly [fence: string, queue: string, queueExpiry: string, limit: string, ...slots: string[]]
  readonly releasing: readonly [queue: string, queueExpiry: string, limit: string, ...slots: string[]]
  readonly leaving: readonly [queue: string, queueExpiry: string, ...slots: string[]]
  readonly channels: readonly [string]
}

function keysWithLists(prefix: string, name: string, limit: number): Keys {
  const k = semaphoreKeys(prefix, name, limit)
  return {
    ...k,
    all: [k.fence, k.queue, k.queueExpiry, k.limit, ...k.slots],
    releasing: [k.queue, k.queueExpiry, k.limit, ...k.slots],
    leaving: [k.queue, k.queueExpiry, ...k.slots],
    channels: [k.channel],
  }
}

type SemaphoreView = ReplyOf<typeof semaphoreInspect>
type Permit = readonly [slot: number, token: string, pttl: number]

const mismatch = (name: string, stored: unknown, limit: number) =>
  new InvalidArgumentError(
    `Semaphore "${name}" is in use with limit ${String(stored)}; this handle asked for limit ${limit} (every caller of one semaphore must use the same limit while permits are held)`,
  )

/** semaphore-acquire's reply; the node's facts follow the slot when they were asked for. */
function decodeGrant(name: string, limit: number, reply: ReplyOf<typeof semaphoreAcquire>, withFacts: boolean): NodeGrant {
  const code = toNumber(reply[0])
  const grant: NodeGrant =
    code === 1
      ? { granted: true, fence: toNumber(reply[1]), claim: String(reply[2]) }
      : code === -1
        ? { granted: false, retry: 0, refusal: mismatch(name, reply[1], limit) }
        : { granted: false, retry: toNumber(reply[1]) }
  return withFacts ? { ...grant, node: nodeFacts(reply, 3) } : grant
}

/** semaphore-extend-many over the leases whose token names a slot; the others hold nothing: false, as `extend` answers, unsent. */
async function extendPermits(
  exec: Exec,
  leases: readonly ExtendItem[],
  keysOf: (name: string) => Keys,
  permitOf: (name: string, token: string) => { base: string; key: string | undefined },
): Promise<boolean[]> {
  const answers = leases.map(() => false)
  const sent: number[] = []
  const keys: string[] = []
  const args: Arg[] = []
  for (const [i, { resource, token, ttl }] of leases.entries()) {
    const { base, key } = permitOf(resource, token)
    if (key === undefined) continue
    sent.push(i)
    keys.push(key, keysOf(resource).limit)
    args.push(base, ttl)
  }
  if (sent.length === 0) return answers
  const extended = decodeMany('semaphore-extend-many', await semaphoreExtendMany.run(exec, keys, args), sent.length)
  for (const [j, i] of sent.entries()) answers[i] = extended[j]!
  return answers
}

/** The nodes' views (one per node that answered) as `inspect` shows them. */
function mergeViews(name: string, limit: number, views: readonly SemaphoreView[], majority: number): SemaphoreInfo {
  // A permit is a token on a majority of nodes in the same slot; its ttl is how long a majority still has it.
  const bySlot = new Map<string, number[]>()
  for (const [, , , ...permits] of views) {
    for (const [slot, token, pttl] of permits as unknown as Permit[]) {
      const key = permitToken(String(token), String(slot))
      bySlot.set(key, [...(bySlot.get(key) ?? []), toNumber(pttl)])
    }
  }
  const permits = [...bySlot]
    .filter(([, pttls]) => pttls.length >= majority)
    .map(([token, pttls]) => ({ token, ttl: pttls.sort((a, b) => b - a)[majority - 1]! }))
  const fences = views.flatMap(([, f]) => (f == null ? [] : [Number(f)]))
  const stored = views.map(([l]) => l).find((l) => l != null)
  return {
    name,
    limit: stored == null ? limit : toNumber(stored),
    held: permits.length,
    permits,
    fence: fences.length > 0 ? Math.max(...fences) : null,
    waiters: Math.max(0, ...views.map(([, , w]) => toNumber(w))),
  }
}

/**
 * A fair counting semaphore: at most `limit` permits at once, each a slot key that expires alone
 * by the server's clock; one fence counter for all permits; the mutex's FIFO queue and wake-ups.
 * On a quorum, each slot is a quorum mutex of its own (a permit is a majority holding the same
 * slot), which is what keeps `limit` exact there (docs/safety.md).
 */
export function semaphore(options: SemaphoreOptions): Primitive<SemaphoreView, SemaphoreInfo> {
  const { limit } = options
  const keysOf = keyCache(options.prefix, (prefix, name) => keysWithLists(prefix, name, limit))
  const retention = options.fenceRetention
  const grace = options.waiterGrace
  /** A permit's token without its slot, and its slot key; no key if the token names no slot of this limit. */
  const permitOf = (name: string, token: string) => {
    const { base, slot } = splitToken(token)
    return { base, key: slot === undefined ? undefined : keysOf(name).slots[slot] }
  }
  return {
    kind: 'semaphore',
    channel: (name) => keysOf(name).channels,
    leaseToken: permitToken,
    async acquire(exec, name, { token, ttl, waiter, score = '', maxTtl }) {
      const reply = await semaphoreAcquire.run(exec, keysOf(name).all, [
        token,
        ttl,
        retention,
        waiter,
        grace,
        limit,
        score,
        maxTtl === undefined ? '' : String(maxTtl),
      ])
      return decodeGrant(name, limit, reply, maxTtl !== undefined)
    },
    async confirm(exec, name, token, fence, waiter) {
      const k = keysOf(name)
      const { base, key } = permitOf(name, token)
      if (key === undefined) return false
      return toNumber(await semaphoreConfirm.run(exec, [key, k.fence, k.queue, k.queueExpiry], [base, fence, retention, waiter])) === 1
    },
    async extend(exec, name, token, ttl) {
      const { base, key } = permitOf(name, token)
      if (key === undefined) return false
      return toNumber(await semaphoreExtend.run(exec, [key, keysOf(name).limit], [base, ttl])) === 1
    },
    extendMany: (exec, leases) => extendPermits(exec, leases, keysOf, permitOf),
    routeKey: (name) => keysOf(name).limit,
    async release(exec, name, token) {
      const k = keysOf(name)
      const { base, slot } = splitToken(token)
      if (slot !== undefined && slot >= limit) return { released: false }
      return decodeRelease(await semaphoreRelease.run(exec, k.releasing, [base, slot ?? '', k.channel, grace]))
    },
    async leave(exec, name, waiter) {
      const k = keysOf(name)
      await semaphoreLeave.run(exec, k.leaving, [waiter, k.channel, grace])
    },
    inspect: (exec, name) => semaphoreInspect.run(exec, keysOf(name).all, []),
    merge: (name, views, majority) => mergeViews(name, limit, views, majority),
  }
}
