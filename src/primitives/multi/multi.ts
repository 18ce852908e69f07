import { keyCache } from '../../util/keys.js'
import { bindVariadic, type Exec } from '../../lua/binding.js'
import { scripts } from '../../lua/index.js'
import { decodeMany, decodeRelease, mutex, mutexKeys, toNumber } from '../mutex/mutex.js'
import type { LockInfo } from '../../topology/backend.js'
import type { NodeGrant, Primitive } from '../../topology/primitive.js'

export interface MultiOptions {
  prefix: string
  /** How long the fence keys outlive their last use (ms). */
  fenceRetention: number
  /** How long past its next re-check a queued waiter keeps its place (ms). */
  waiterGrace: number
}

/**
 * The name under which an all-or-nothing lock of several resources runs (its waiters queue, its
 * lease is known, messages and telemetry name it): the sorted, distinct names, each JSON-escaped,
 * joined by `", "`, so that `lock "${name}"` reads `lock "a", "b"`. A `"` inside a name is always
 * escaped, so the separator cannot occur in one and the names parse back. Sorted, so that [a, b]
 * and [b, a] are one lock, and so that the ordered fallback takes them in one global order.
 */
export const multiName = (resources: readonly string[]): string =>
  [...new Set(resources)]
    .sort()
    .map((r) => JSON.stringify(r).slice(1, -1))
    .join('", "')
export const multiResources = (name: string): string[] => JSON.parse(`["${name}"]`) as string[]

// The first resource's keys are named; each further resource's follow in the same order.
const FOUR = ['lock', 'fence', 'queue', 'queueExpiry'] as const
const THREE = ['lock', 'queue', 'queueExpiry'] as const
const acquire = bindVariadic(scripts.multiAcquire, FOUR, 'the same of each further resource', ['token', 'ttl', 'retention', 'waiter', 'grace', 'score', 'maxTtl'])
const release = bindVariadic(scripts.multiRelease, THREE, 'the same of each further resource', ['token', 'grace'])
const extend = bindVariadic(scripts.multiExtend, ['lock'], 'the lock key of each further resource', ['token', 'ttl'])
const extendMany = bindVariadic(scripts.multiExtendMany, ['lock'], 'the further lock keys of every lease', [])
const leave = bindVariadic(scripts.multiLeave, THREE, 'the same of each further resource', ['waiter', 'grace'])
const commit = bindVariadic(scripts.multiCommit, FOUR, 'the same of each further resource', ['token', 'fence', 'retention', 'waiter'])

/** The named keys of the first resource, and the rest. */
function split<N extends number>(keys: readonly string[], n: N): [readonly string[] & { length: N }, string[]] {
  return [keys.slice(0, n) as unknown as readonly string[] & { length: N }, keys.slice(n)]
}

/**
 * Several mutexes taken at once, all or nothing, in one script per node (their keys must be on
 * one node: one Redis, a quorum of independent nodes, or one cluster slot). The locks are the
 * mutexes' own keys, so a single-resource `acquire` of one of them queues and waits as usual; the
 * lease has one fence for all of them, stored as each resource's last fence.
 */
export function multi(options: MultiOptions): Primitive<LockInfo[], LockInfo[]> {
  const keysOf = keyCache(options.prefix, (prefix, name) => multiResources(name).map((r) => mutexKeys(prefix, r)))
  const single = mutex(options)
  const retention = options.fenceRetention
  const grace = options.waiterGrace
  const four = (name: string) => keysOf(name).flatMap((k) => [k.lock, k.fence, k.queue, k.queueExpiry])
  const three = (name: string) => keysOf(name).flatMap((k) => [k.lock, k.queue, k.queueExpiry])
  const channels = (name: string) => keysOf(name).map((k) => k.channel)
  const decode = (reply: readonly unknown[]): NodeGrant =>
    toNumber(reply[0]) === 1 ? { granted: true, fence: toNumber(reply[1]), claim: '' } : { granted: false, retry: toNumber(reply[1]) }
  return {
    kind: 'multi',
    channel: channels,
    leaseToken: (token) => token,
    async acquire(exec, name, { token, ttl, waiter }) {
      const [first, rest] = split(four(name), 4)
      return decode((await acquire.run(exec, first as unknown as typeof FOUR, rest, [token, ttl, retention, waiter, grace, '', ''])) as unknown[])
    },
    async quorumAcquire(exec, name, { token, ttl, waiter, score, maxTtl }) {
      const [first, rest] = split(four(name), 4)
      const reply = (await acquire.run(exec, first as unknown as typeof FOUR, rest, [token, ttl, retention, waiter, grace, score, maxTtl])) as unknown[]
      return { ...decode(reply), young: toNumber(reply[3]), runId: String(reply[4]), now: toNumber(reply[5]) }
    },
    async commit(exec, name, token, fence, waiter) {
      const [first, rest] = split(four(name), 4)
      return toNumber(await commit.run(exec, first as unknown as typeof FOUR, rest, [token, fence, retention, waiter])) === 1
    },
    async extend(exec, name, token, ttl) {
      const [first, ...rest] = keysOf(name).map((k) => k.lock)
      return toNumber(await extend.run(exec, [first!], rest, [token, ttl])) === 1
    },
    async extendMany(exec, leases) {
      const locks: string[] = []
      const args: (string | number)[] = []
      for (const { resource, token, ttl } of leases) {
        const keys = keysOf(resource)
        for (const k of keys) locks.push(k.lock)
        args.push(keys.length, token, ttl)
      }
      return decodeMany('multi-extend-many', await extendMany.run(exec, [locks[0]!], locks.slice(1), [], args), leases.length)
    },
    // Every lock of an all-or-nothing lease shares one cluster slot (or it is not atomic).
    routeKey: (name) => keysOf(name)[0]!.lock,
    async release(exec, name, token) {
      const [first, rest] = split(three(name), 3)
      return decodeRelease(await release.run(exec, first as unknown as typeof THREE, rest, [token, grace], channels(name)))
    },
    async leave(exec, name, waiter) {
      const [first, rest] = split(three(name), 3)
      await leave.run(exec, first as unknown as typeof THREE, rest, [waiter, grace], channels(name))
    },
    async inspect(exec: Exec, name) {
      return Promise.all(multiResources(name).map(async (r) => single.merge(r, [await single.inspect(exec, r)], 1)))
    },
    merge: (_name, views) => views[0] ?? [],
  }
}
