import type { Attempt, Backend, LockInfo } from './backend.js'
import { clusterSlot } from '../util/keys.js'
import { wakeRefused } from '../errors/failures.js'
import { GroupCommit } from './group.js'
import type { Exec } from '../lua/binding.js'
import type { Into } from '../util/into.js'
import type { NodeGrant, Primitive, Released } from './primitive.js'
import type { RedisAdapter } from '../redis/adapter.js'
import { subscriberFor, type SharedSubscriber } from '../redis/subscriber.js'
import { revokeNotice } from '../lua/embedded.js'

/**
 * Any primitive on one Redis, or on one Redis Cluster (every key of a resource shares a hash tag,
 * so each call runs on the slot's node): one script call per operation, or one per slot for the
 * acquisitions (or releases) made in one turn of the event loop (see group.ts).
 */
export class SingleBackend<Info = LockInfo> implements Backend<Info> {
  readonly maxTtl: number
  /** One pub/sub connection per client, shared by every instance on it: wake-ups and revocation notices. */
  readonly wake: SharedSubscriber
  readonly notices: SharedSubscriber
  /** Renewals of several leases in one call, where the primitive has the batch script (see renewals.ts). */
  readonly extendMany?: Backend<Info>['extendMany']
  /** One node: any leases together; a cluster: the leases of one slot together. */
  readonly batchKey?: (resource: string) => number
  protected readonly redis: RedisAdapter
  protected readonly primitive: Primitive<unknown, Info>
  /** The primitive with its acquisitions and releases grouped per turn (departures go one by one, as a waiter gives up). */
  readonly #grouped: GroupCommit<unknown, Info>
  readonly #exec: Exec

  constructor(redis: RedisAdapter, primitive: Primitive<unknown, Info>, maxTtl: number) {
    this.redis = redis
    this.primitive = primitive
    this.maxTtl = maxTtl
    this.wake = subscriberFor(redis)
    this.notices = this.wake
    this.#grouped = new GroupCommit(primitive, redis.isCluster)
    this.#exec = redis.evalScript
    if (primitive.extendMany && primitive.routeKey) {
      this.extendMany = (leases) => primitive.extendMany!(this.#exec, leases)
      this.batchKey = redis.isCluster ? (resource) => clusterSlot(primitive.routeKey!(resource)) : () => 0
    }
  }

  isClosed(): boolean {
    return this.redis.isClosed()
  }

  clientError(): Error | undefined {
    return this.redis.clientError()
  }

  attempt(resource: string, token: string, ttl: number, waiter: string, into: Into<Attempt>): void {
    this.#grouped.acquireGrouped(this.#exec, resource, { token, ttl, waiter }, granted(this.primitive, token, into))
  }

  extend(resource: string, token: string, ttl: number): Promise<boolean> {
    return this.primitive.extend(this.#exec, resource, token, ttl)
  }

  release(resource: string, token: string, into: Into<boolean>): void {
    this.#grouped.releaseGrouped(this.#exec, resource, token, released(resource, into))
  }

  leave(resource: string, waiter: string): Promise<void> {
    return this.primitive.leave(this.#exec, resource, waiter)
  }

  async inspect(resource: string): Promise<Info> {
    return this.primitive.merge(resource, [await this.primitive.inspect(this.#exec, resource)], 1)
  }

  channel(resource: string): readonly string[] {
    return this.primitive.channel(resource)
  }

  async announce(channel: string, token: string): Promise<void> {
    await revokeNotice.run(this.#exec, [], [channel, token])
  }
}

/** The node's grant as the runtime's attempt: a lease token, a refusal to wait on, or the refusal's error. */
function granted(primitive: Primitive<unknown, unknown>, token: string, into: Into<Attempt>): Into<NodeGrant> {
  return {
    value(grant) {
      if (grant.granted) into.value({ acquired: true, fence: grant.fence, token: primitive.leaseToken(token, grant.claim) })
      else if (grant.refusal) into.error(grant.refusal)
      else into.value({ acquired: false, retry: grant.retry })
    },
    error: into.error,
  }
}

/** Released or not; a release whose wake-up PUBLISH Redis refused is an error (the next waiter sleeps). */
function released(resource: string, into: Into<boolean>): Into<Released> {
  return {
    value(reply) {
      if (reply.refused !== undefined) into.error(wakeRefused(resource, reply.refused))
      else into.value(reply.released)
    },
    error: into.error,
  }
}
