import type { Attempt, Backend } from './backend.js'
import { clusterSlot } from '../util/keys.js'
import { wakeRefused } from '../errors/failures.js'
import { groupCommit } from './group.js'
import { reading } from '../util/into.js'
import type { NodeGrant, Primitive, Released } from './primitive.js'
import type { RedisAdapter } from '../redis/adapter.js'
import { subscriberFor } from '../redis/subscriber.js'

/**
 * Any primitive on one Redis, or on one Redis Cluster (every key of a resource shares a hash tag,
 * so each call runs on the slot's node): one script call per operation, or one per slot for the
 * acquisitions (or releases) made in one turn of the event loop (see group.ts).
 */
export function single<Info>(redis: RedisAdapter, kind: Primitive<unknown, Info>, maxTtl: number): Backend<Info> {
  const primitive = kind
  // Acquisitions and releases grouped per turn (departures go one by one, as a waiter gives up).
  const grouped = groupCommit(kind, redis.isCluster)
  const exec = redis.evalScript
  const many = primitive.extendMany
  const routeKey = primitive.routeKey
  const granted =
    (token: string) =>
    (grant: NodeGrant): Attempt => {
      if (grant.granted) return { acquired: true, fence: grant.fence, token: primitive.leaseToken(token, grant.claim) }
      if (grant.refusal) throw grant.refusal
      return { acquired: false, retry: grant.retry }
    }
  const released =
    (resource: string) =>
    (reply: Released): boolean => {
      if (reply.refused !== undefined) throw wakeRefused(resource, reply.refused)
      return reply.released
    }
  return {
    maxTtl,
    wake: subscriberFor(redis),
    isClosed: () => redis.isClosed(),
    clientError: () => redis.clientError(),
    attempt: (resource, token, ttl, waiter, into) => grouped.acquire(exec, resource, { token, ttl, waiter }, reading(into, granted(token))),
    extend: (resource, token, ttl) => primitive.extend(exec, resource, token, ttl),
    ...(many && routeKey
      ? {
          extendMany: (leases) => many(exec, leases),
          // One node: any leases together; a cluster: the leases of one slot together.
          batchKey: redis.isCluster ? (resource) => clusterSlot(routeKey(resource)) : () => 0,
        }
      : {}),
    release: (resource, token, into) => grouped.release(exec, resource, token, reading(into, released(resource))),
    leave: (resource, waiter) => primitive.leave(exec, resource, waiter),
    async inspect(resource) {
      return primitive.merge(resource, [await primitive.inspect(exec, resource)], 1)
    },
    channel: (resource) => primitive.channel(resource),
  }
}
