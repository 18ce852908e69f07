import type { Backend } from './backend.js'
import { ReplicationError } from '../errors/errors.js'
import type { AttemptRequest, NodeGrant, Primitive } from './primitive.js'
import type { Attempt } from './backend.js'
import { Batcher } from './group.js'
import { clusterSlot } from '../util/keys.js'
import type { RedisAdapter } from '../redis/adapter.js'
import { handDecoded, type Exec } from '../lua/binding.js'
import { single } from './single.js'
import { promised } from '../util/into.js'

interface Call {
  readonly resource: string
  readonly request: AttemptRequest
}

/** `createLocks({ replicas })`: how many replicas must acknowledge each acquisition and extension (WAIT). */
export interface ReplicasOptions {
  /** Replicas that must acknowledge. */
  count: number
  /** How long WAIT may block, in ms. */
  timeout: number
}

/**
 * Any primitive on one Redis, but a grant (and each extension) only counts once `count` replicas
 * acknowledged it, so a failover to one of them keeps the lock and its fence. WAIT is pipelined
 * behind the script (no extra round trip); the attempts of one turn share one script call and one
 * WAIT (see group.ts). Release, leave and inspect are the single node's.
 */
export function replicated<Info>(redis: RedisAdapter, primitive: Primitive<unknown, Info>, maxTtl: number, options: ReplicasOptions): Backend<Info> {
  const base = single(redis, primitive, maxTtl)
  const wait = [options.count, options.timeout] as const
  /** A node whose script calls are each followed by WAIT; `acks()` is the last call's acknowledgements. */
  const waitingNode = () => {
    let acks = 0
    const exec: Exec = (script, keys, args, decode, into) => {
      redis.evalThenWait(script, keys, args, wait).then(([reply, acknowledged]) => {
        acks = acknowledged
        handDecoded(decode, into, reply)
      }, into.error)
    }
    return { exec, acks: () => acks }
  }
  /** What a grant that `acks` replicas acknowledged becomes: a lease, or (too few) a ReplicationError once rolled back. */
  const settle = async ({ resource, request }: Call, grant: NodeGrant, acks: number): Promise<Attempt> => {
    if (!grant.granted) {
      if (grant.refusal) throw grant.refusal
      return { acquired: false, retry: grant.retry }
    }
    const leaseToken = primitive.leaseToken(request.token, grant.claim)
    if (acks < options.count) {
      // Not on enough replicas: a failover now could lose it, so it must not become a lease.
      await promised<boolean>((into) => base.release(resource, leaseToken, into)).catch(() => {})
      throw new ReplicationError(resource, acks, options.count)
    }
    return { acquired: true, fence: grant.fence, token: leaseToken }
  }
  const attemptOne = async (call: Call): Promise<Attempt> => {
    const node = waitingNode()
    const grant = await promised<NodeGrant>((into) => primitive.acquire(node.exec, call.resource, call.request, into))
    return settle(call, grant, node.acks())
  }
  const { acquireMany, routeKey } = primitive
  // The attempts of one turn: one script call and one WAIT for all; each grant is judged by that WAIT.
  const attempts =
    acquireMany && routeKey
      ? new Batcher<Call, Attempt>({
          one: (call, into) => void attemptOne(call).then(into.value, into.error),
          async many(calls) {
            const node = waitingNode()
            const grants = await acquireMany.call(primitive, node.exec, calls)
            const acks = node.acks()
            return Promise.all(grants.map((grant, i) => (grant instanceof Error ? grant : settle(calls[i]!, grant, acks).catch((err: Error) => err))))
          },
          ...(redis.isCluster ? { key: (call: Call) => clusterSlot(routeKey(call.resource)) } : {}),
        })
      : undefined
  return {
    ...base,
    attempt: (resource, token, ttl, waiter, into) => {
      const call = { resource, request: { token, ttl, waiter } }
      if (attempts) attempts.push(call, into)
      else void attemptOne(call).then(into.value, into.error)
    },
    // Renewals of several leases: one script call and one WAIT for all, the same verdict for each.
    ...(primitive.extendMany && base.batchKey
      ? {
          batchKey: base.batchKey,
          async extendMany(leases) {
            const node = waitingNode()
            const extended = await primitive.extendMany!(node.exec, leases)
            const acks = node.acks()
            return extended.map((ok, i) => (ok && acks < options.count ? new ReplicationError(leases[i]!.resource, acks, options.count, 'extension') : ok))
          },
        }
      : {}),
    async extend(resource, token, ttl) {
      const node = waitingNode()
      if (!(await primitive.extend(node.exec, resource, token, ttl))) return false
      // The replicas may still have the old expiry; the lease keeps its old deadline, which they honour.
      if (node.acks() < options.count) throw new ReplicationError(resource, node.acks(), options.count, 'extension')
      return true
    },
  }
}
