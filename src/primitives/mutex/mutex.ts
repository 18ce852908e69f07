import type { LockInfo } from '../../topology/backend.js'
import { keyCache } from '../../util/keys.js'
import { bind, bindVariadic } from '../../lua/binding.js'
import { scripts } from '../../lua/index.js'
import type { Primitive } from '../../topology/primitive.js'

export interface MutexOptions {
  prefix: string
  /** How long the fence key outlives its last use (ms). */
  fenceRetention: number
  /** How long past its next re-check a queued waiter keeps its place (ms). */
  waiterGrace: number
}

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

const QUEUE = ['lock', 'queue', 'queueExpiry'] as const
const ALL = ['lock', 'fence', 'queue', 'queueExpiry'] as const
const acquire = bind(scripts.mutexAcquire, ALL, ['token', 'ttl', 'retention', 'waiter', 'grace'])
const quorumAcquire = bind(scripts.quorumAcquire, ALL, ['token', 'ttl', 'retention', 'waiter', 'grace', 'score', 'maxTtl'])
const commit = bind(scripts.quorumCommit, ALL, ['token', 'fence', 'retention', 'waiter'])
const extend = bind(scripts.mutexExtend, ['lock'], ['token', 'ttl'])
const extendMany = bindVariadic(scripts.mutexExtendMany, ['lock'], 'further lock keys', [])
const release = bind(scripts.mutexRelease, QUEUE, ['token', 'channel', 'grace'])
const leave = bind(scripts.mutexLeave, QUEUE, ['waiter', 'channel', 'grace'])
const inspect = bind(scripts.mutexInspect, ALL, [])

export const toNumber = (value: unknown): number => (typeof value === 'number' ? value : Number(value))

/** The release script's reply: 1, 0, or {1, text of a refused PUBLISH} (see mutex-release.lua). */
export function decodeRelease(reply: unknown): { released: boolean; refused?: string } {
  if (Array.isArray(reply)) return { released: toNumber(reply[0]) === 1, refused: String(reply[1]) }
  return { released: toNumber(reply) === 1 }
}

/** A batch script's reply (extend-many): one 1 or 0 per lease, in order; anything else is an error. */
export function decodeMany(script: string, reply: unknown, count: number): boolean[] {
  if (!Array.isArray(reply) || reply.length !== count) throw new Error(`${script} answered ${String(reply)} for ${count} leases`)
  return reply.map((r) => toNumber(r) === 1)
}

type MutexView = readonly [token: string | null, pttl: number, fence: string | null, waiters: number]

/** A fair mutex: one script call per acquire, extend and release on each node. */
export function mutex(options: MutexOptions): Primitive<MutexView, LockInfo> {
  const keysOf = keyCache(options.prefix, mutexKeys)
  // As strings once: the client would turn the numbers into strings on every call.
  const retention = String(options.fenceRetention)
  const grace = String(options.waiterGrace)
  const all = (resource: string) => {
    const k = keysOf(resource)
    return [k.lock, k.fence, k.queue, k.queueExpiry] as const
  }
  const queue = (resource: string) => {
    const k = keysOf(resource)
    return [k.lock, k.queue, k.queueExpiry] as const
  }
  return {
    kind: 'mutex',
    channel: (resource) => keysOf(resource).channel,
    leaseToken: (token) => token,
    acquire: (exec, resource, { token, ttl, waiter }) =>
      acquire.run(exec, all(resource), [token, ttl, retention, waiter, grace]).then((reply) => {
        const [code, value] = reply as [number, number]
        return code === 1 ? { granted: true, fence: toNumber(value), claim: '' } : { granted: false, retry: toNumber(value) }
      }),
    async quorumAcquire(exec, resource, { token, ttl, waiter, score, maxTtl }) {
      const [code, value, young, runId, now] = (await quorumAcquire.run(exec, all(resource), [token, ttl, retention, waiter, grace, score, maxTtl])) as [
        number,
        number | string,
        number,
        string,
        string,
      ]
      const node = { young: toNumber(young), runId: String(runId), now: toNumber(now) }
      return toNumber(code) === 1 ? { granted: true, fence: toNumber(value), claim: '', ...node } : { granted: false, retry: toNumber(value), ...node }
    },
    async commit(exec, resource, token, fence, waiter) {
      return toNumber(await commit.run(exec, all(resource), [token, fence, retention, waiter])) === 1
    },
    async extend(exec, resource, token, ttl) {
      return toNumber(await extend.run(exec, [keysOf(resource).lock], [token, ttl])) === 1
    },
    async extendMany(exec, leases) {
      const locks: string[] = []
      const args: (string | number)[] = []
      for (const { resource, token, ttl } of leases) {
        locks.push(keysOf(resource).lock)
        args.push(token, ttl)
      }
      return decodeMany('mutex-extend-many', await extendMany.run(exec, [locks[0]!], locks.slice(1), [], args), leases.length)
    },
    routeKey: (resource) => keysOf(resource).lock,
    release: (exec, resource, token) => {
      const k = keysOf(resource)
      return release.run(exec, [k.lock, k.queue, k.queueExpiry], [token, k.channel, grace]).then(decodeRelease)
    },
    async leave(exec, resource, waiter) {
      await leave.run(exec, queue(resource), [waiter, keysOf(resource).channel, grace])
    },
    async inspect(exec, resource) {
      return (await inspect.run(exec, all(resource), [])) as MutexView
    },
    merge(resource, views, majority) {
      // Held = one token on a majority; its ttl is how long a majority still has it.
      const pttls = new Map<string, number[]>()
      for (const [token, pttl] of views) if (typeof token === 'string') pttls.set(token, [...(pttls.get(token) ?? []), toNumber(pttl)])
      const holder = [...pttls].find(([, list]) => list.length >= majority)
      const fences = views.flatMap(([, , f]) => (f == null ? [] : [Number(f)]))
      return {
        resource,
        held: holder !== undefined,
        token: holder ? holder[0] : null,
        fence: fences.length > 0 ? Math.max(...fences) : null,
        ttl: holder ? holder[1].sort((a, b) => b - a)[majority - 1]! : null,
        waiters: Math.max(0, ...views.map(([, , , w]) => toNumber(w))),
      }
    },
  }
}
