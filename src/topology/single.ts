import type { Attempt, Backend } from './backend.js'
import { clusterSlot } from '../util/keys.js'
import { wakeRefused } from '../errors/failures.js'
import { groupedCalls } from './group.js'
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
  const calls = groupedCalls(kind, redis.isCluster)
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
    attempt: (resource, token, ttl, waiter, into) => calls.acquireInto(exec, resource, { token, ttl, waiter }, granted(token), into),
    extend: (resource, token, ttl) => primitive.extend(exec, resource, token, ttl),
    ...(many && routeKey
      ? {
          extendMany: (leases) => many(exec, leases),
          // One node: any leases together; a cluster: the leases of one slot together.
          batchKey: redis.isCluster ? (resource) => clusterSlot(routeKey(resource)) : () => 0,
        }
      : {}),
    release: (resource, token) => calls.release(exec, resource, token, released(resource)),
    releaseInto: (resource, token, into) => calls.releaseInto(exec, resource, token, released(resource), into),
    leave: (resource, waiter) => primitive.leave(exec, resource, waiter),
    async inspect(resource) {
      return primitive.merge(resource, [await primitive.inspect(exec, resource)], 1)
    },
    channel: (resource) => primitive.channel(resource),
  }
}
