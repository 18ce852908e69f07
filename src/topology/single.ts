import type { Attempt, Backend } from './backend.js'
import { clusterSlot } from '../util/keys.js'
import { wakeRefused } from '../errors/failures.js'
import { groupCommit } from './group.js'
import type { Into } from '../util/into.js'
import type { NodeGrant, Primitive, Released } from './primitive.js'
import type { RedisAdapter } from '../redis/adapter.js'
import { subscriberFor } from '../redis/subscriber.js'
import { revokeNotice } from '../lua/embedded.js'

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
  /** The node's grant as the runtime's attempt: a lease token, a refusal to wait on, or the refusal's error. */
  const granted = (token: string, into: Into<Attempt>): Into<NodeGrant> => ({
    value(grant) {
      if (grant.granted) into.value({ acquired: true, fence: grant.fence, token: primitive.leaseToken(token, grant.claim) })
      else if (grant.refusal) into.error(grant.refusal)
      else into.value({ acquired: false, retry: grant.retry })
    },
    error: into.error,
  })
  /** Released or not; a release whose wake-up PUBLISH Redis refused is an error (the next waiter sleeps). */
  const released = (resource: string, into: Into<boolean>): Into<Released> => ({
    value(reply) {
      if (reply.refused !== undefined) into.error(wakeRefused(resource, reply.refused))
      else into.value(reply.released)
    },
    error: into.error,
  })
  return {
    maxTtl,
    wake: subscriberFor(redis),
    isClosed: () => redis.isClosed(),
    clientError: () => redis.clientError(),
    attempt: (resource, token, ttl, waiter, into) => grouped.acquire(exec, resource, { token, ttl, waiter }, granted(token, into)),
    extend: (resource, token, ttl) => primitive.extend(exec, resource, token, ttl),
    ...(many && routeKey
      ? {
          extendMany: (leases) => many(exec, leases),
          // One node: any leases together; a cluster: the leases of one slot together.
          batchKey: redis.isCluster ? (resource) => clusterSlot(routeKey(resource)) : () => 0,
        }
      : {}),
    release: (resource, token, into) => grouped.release(exec, resource, token, released(resource, into)),
    leave: (resource, waiter) => primitive.leave(exec, resource, waiter),
    async inspect(resource) {
      return primitive.merge(resource, [await primitive.inspect(exec, resource)], 1)
    },
    channel: (resource) => primitive.channel(resource),
    notices: subscriberFor(redis),
    announce: async (channel, token) => void (await revokeNotice.run(exec, [], [channel, token])),
  }
}
