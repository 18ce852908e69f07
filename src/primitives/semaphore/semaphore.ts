import { InvalidArgumentError } from '../../errors/errors.js'
import { keyCache } from '../../util/keys.js'
import { bind, bindVariadic } from '../../lua/binding.js'
import { scripts } from '../../lua/index.js'
import { decodeMany, decodeRelease, toNumber } from '../mutex/mutex.js'
import type { NodeGrant, Primitive } from '../../topology/primitive.js'

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

const acquire = bindVariadic(scripts.semaphoreAcquire, ['fence', 'queue', 'queueExpiry', 'limit'], 'slots', ['token', 'ttl', 'retention', 'waiter', 'grace', 'limit', 'score', 'maxTtl'])
const release = bindVariadic(scripts.semaphoreRelease, ['queue', 'queueExpiry', 'limit'], 'slots', ['token', 'slot', 'channel', 'grace'])
const extend = bind(scripts.semaphoreExtend, ['slot', 'limit'], ['token', 'ttl'])
const extendMany = bindVariadic(scripts.semaphoreExtendMany, ['slot', 'limit'], 'further (slot, limit) key pairs', [])
const leave = bindVariadic(scripts.semaphoreLeave, ['queue', 'queueExpiry'], 'slots', ['waiter', 'channel', 'grace'])
const inspect = bindVariadic(scripts.semaphoreInspect, ['fence', 'queue', 'queueExpiry', 'limit'], 'slots', [])
// The quorum write-back is the mutex's, with the permit's slot in place of the lock key.
const commit = bind(scripts.quorumCommit, ['lock', 'fence', 'queue', 'queueExpiry'], ['token', 'fence', 'retention', 'waiter'])

type SemaphoreView = readonly [limit: string | null, fence: string | null, waiters: number, ...permits: (readonly [slot: number, token: string, pttl: number])[]]

/**
 * A fair counting semaphore: at most `limit` permits at once, each a slot key that expires alone
 * by the server's clock; one fence counter for all permits; the mutex's FIFO queue and wake-ups.
 * On a quorum, each slot is a quorum mutex of its own (a permit is a majority holding the same
 * slot), which is what keeps `limit` exact there (docs/safety.md).
 */
export function semaphore(options: SemaphoreOptions): Primitive<SemaphoreView, SemaphoreInfo> {
  const { limit } = options
  const keysOf = keyCache(options.prefix, (prefix, name) => semaphoreKeys(prefix, name, limit))
  const retention = options.fenceRetention
  const grace = options.waiterGrace
  const mismatch = (name: string, stored: unknown) =>
    new InvalidArgumentError(`Semaphore "${name}" is in use with limit ${String(stored)}; this handle asked for limit ${limit} (every caller of one semaphore must use the same limit while permits are held)`)
  const decodeGrant = (name: string, reply: readonly unknown[]): NodeGrant => {
    const code = toNumber(reply[0])
    if (code === 1) return { granted: true, fence: toNumber(reply[1]), claim: String(reply[2]) }
    if (code === -1) return { granted: false, retry: 0, refusal: mismatch(name, reply[1]) }
    return { granted: false, retry: toNumber(reply[1]) }
  }
  const run = (exec: Parameters<Primitive['acquire']>[0], name: string, token: string, ttl: number, waiter: string, score: string, maxTtl: string) => {
    const k = keysOf(name)
    return acquire.run(exec, [k.fence, k.queue, k.queueExpiry, k.limit], k.slots, [token, ttl, retention, waiter, grace, limit, score, maxTtl]) as Promise<unknown[]>
  }
  /** A permit's token without its slot, and its slot key; no key if the token names no slot of this limit. */
  const permitOf = (name: string, token: string) => {
    const { base, slot } = splitToken(token)
    return { base, key: slot === undefined ? undefined : keysOf(name).slots[slot] }
  }
  return {
    kind: 'semaphore',
    channel: (name) => keysOf(name).channel,
    leaseToken: permitToken,
    async acquire(exec, name, { token, ttl, waiter }) {
      return decodeGrant(name, await run(exec, name, token, ttl, waiter, '', ''))
    },
    async quorumAcquire(exec, name, { token, ttl, waiter, score, maxTtl }) {
      const reply = await run(exec, name, token, ttl, waiter, score, String(maxTtl))
      return { ...decodeGrant(name, reply), young: toNumber(reply[3]), runId: String(reply[4]), now: toNumber(reply[5]) }
    },
    async commit(exec, name, token, fence, waiter) {
      const k = keysOf(name)
      const { base, key } = permitOf(name, token)
      if (key === undefined) return false
      return toNumber(await commit.run(exec, [key, k.fence, k.queue, k.queueExpiry], [base, fence, retention, waiter])) === 1
    },
    async extend(exec, name, token, ttl) {
      const { base, key } = permitOf(name, token)
      if (key === undefined) return false
      return toNumber(await extend.run(exec, [key, keysOf(name).limit], [base, ttl])) === 1
    },
    async extendMany(exec, leases) {
      // A token that names no slot of this limit holds nothing: false, as `extend` answers, unsent.
      const answers = leases.map(() => false)
      const sent: number[] = []
      const keys: string[] = []
      const args: (string | number)[] = []
      for (const [i, { resource, token, ttl }] of leases.entries()) {
        const { base, key } = permitOf(resource, token)
        if (key === undefined) continue
        sent.push(i)
        keys.push(key, keysOf(resource).limit)
        args.push(base, ttl)
      }
      if (sent.length === 0) return answers
      const extended = decodeMany('semaphore-extend-many', await extendMany.run(exec, [keys[0]!, keys[1]!], keys.slice(2), [], args), sent.length)
      for (const [j, i] of sent.entries()) answers[i] = extended[j]!
      return answers
    },
    routeKey: (name) => keysOf(name).limit,
    async release(exec, name, token) {
      const k = keysOf(name)
      const { base, slot } = splitToken(token)
      if (slot !== undefined && slot >= limit) return { released: false }
      return decodeRelease(await release.run(exec, [k.queue, k.queueExpiry, k.limit], k.slots, [base, slot ?? '', k.channel, grace]))
    },
    async leave(exec, name, waiter) {
      const k = keysOf(name)
      await leave.run(exec, [k.queue, k.queueExpiry], k.slots, [waiter, k.channel, grace])
    },
    async inspect(exec, name) {
      const k = keysOf(name)
      return (await inspect.run(exec, [k.fence, k.queue, k.queueExpiry, k.limit], k.slots, [])) as unknown as SemaphoreView
    },
    merge(name, views, majority) {
      // A permit is a token on a majority of nodes in the same slot; its ttl is how long a majority still has it.
      const bySlot = new Map<string, number[]>()
      for (const [, , , ...permits] of views) {
        for (const [slot, token, pttl] of permits) {
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
    },
  }
}
