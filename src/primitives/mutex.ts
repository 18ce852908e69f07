import type { Attempt, Backend, LockInfo } from '../backend.js'
import { RedisError } from '../errors.js'
import { keyCache } from '../keys.js'
import type { RedisAdapter } from '../redis/adapter.js'
import { subscriberFor } from '../redis/subscriber.js'
import { scripts } from '../scripts/index.js'

export interface MutexOptions {
  prefix: string
  maxTtl: number
  /** How long the fence key outlives its last use (ms). */
  fenceRetention: number
  /** How long past its next re-check a queued waiter keeps its place (ms). */
  waiterGrace: number
}

const toNumber = (value: unknown): number => (typeof value === 'number' ? value : Number(value))

/** The release script's reply: 1, 0, or {1, text of a refused PUBLISH} (see mutex-release.lua). */
export function decodeRelease(reply: unknown): { released: boolean; refused?: string } {
  if (Array.isArray(reply)) return { released: toNumber(reply[0]) === 1, refused: String(reply[1]) }
  return { released: toNumber(reply) === 1 }
}

/** A release that happened, but whose wake-up Redis refused (the user lacks PUBLISH): say both. */
export function wakeRefused(resource: string, refused: string): RedisError {
  return new RedisError(
    `Released lock "${resource}", but Redis refused the PUBLISH that wakes the next waiter (grant the Redis user PUBLISH on the lock channels, &<prefix>*); waiters find the lock free only at their next re-check: ${refused}`,
    { cause: new Error(refused) },
  )
}

/** A fair mutex on one Redis (or one Redis Cluster): one script call per acquire, extend, release. */
export function mutexBackend(redis: RedisAdapter, options: MutexOptions): Backend {
  const keysOf = keyCache(options.prefix)
  const retention = String(options.fenceRetention)
  const grace = String(options.waiterGrace)

  return {
    maxTtl: options.maxTtl,
    wake: subscriberFor(redis),
    isClosed: () => redis.isClosed(),
    async attempt(resource, token, ttl, waiter): Promise<Attempt> {
      const k = keysOf(resource)
      const reply = (await redis.evalScript(
        scripts.mutexAcquire,
        [k.lock, k.fence, k.queue, k.queueExpiry],
        [token, ttl, retention, waiter, grace],
      )) as [number, number]
      return reply[0] === 1 ? { acquired: true, fence: toNumber(reply[1]) } : { acquired: false, retry: toNumber(reply[1]) }
    },
    async extend(resource, token, ttl) {
      return toNumber(await redis.evalScript(scripts.mutexExtend, [keysOf(resource).lock], [token, ttl])) === 1
    },
    async release(resource, token) {
      const k = keysOf(resource)
      const reply = decodeRelease(await redis.evalScript(scripts.mutexRelease, [k.lock, k.queue, k.queueExpiry], [token, k.channel, grace]))
      if (reply.refused !== undefined) throw wakeRefused(resource, reply.refused)
      return reply.released
    },
    async leave(resource, waiter) {
      const k = keysOf(resource)
      await redis.evalScript(scripts.mutexLeave, [k.lock, k.queue, k.queueExpiry], [waiter, k.channel, grace])
    },
    async inspect(resource): Promise<LockInfo> {
      const k = keysOf(resource)
      const [token, pttl, fence, waiters] = (await redis.evalScript(scripts.mutexInspect, [k.lock, k.fence, k.queue, k.queueExpiry], [])) as [
        string | null,
        number,
        string | null,
        number,
      ]
      const held = typeof token === 'string'
      return {
        resource,
        held,
        token: held ? token : null,
        fence: fence == null ? null : Number(fence),
        ttl: held ? toNumber(pttl) : null,
        waiters: toNumber(waiters),
      }
    },
    channel: (resource) => keysOf(resource).channel,
  }
}
