import type { Backend } from './backend.js'
import { ReplicationError } from '../errors/errors.js'
import type { Primitive } from './primitive.js'
import type { RedisAdapter } from '../redis/adapter.js'
import type { Exec } from '../lua/binding.js'
import { single } from './single.js'

export interface ReplicasOptions {
  /** Replicas that must acknowledge the lock write. */
  count: number
  /** How long WAIT may block, in ms. */
  timeout: number
}

/**
 * Any primitive on one Redis, but a grant (and each extension) only counts once `count` replicas
 * acknowledged it, so a failover to one of them keeps the lock and its fence. WAIT is pipelined
 * behind the script (no extra round trip). Release, leave and inspect are the single node's.
 */
export function replicated<Info>(redis: RedisAdapter, primitive: Primitive<unknown, Info>, maxTtl: number, options: ReplicasOptions): Backend<Info> {
  const base = single(redis, primitive, maxTtl)
  const wait = [options.count, options.timeout] as const
  /** A node whose script calls are each followed by WAIT; `acks()` is the last call's acknowledgements. */
  const waitingNode = () => {
    let acks = 0
    const exec: Exec = async (script, keys, args) => {
      const [reply, acknowledged] = await redis.evalThenWait(script, keys, args, wait)
      acks = acknowledged
      return reply
    }
    return { exec, acks: () => acks }
  }
  return {
    ...base,
    async attempt(resource, token, ttl, waiter) {
      const node = waitingNode()
      const grant = await primitive.acquire(node.exec, resource, { token, ttl, waiter })
      if (!grant.granted) {
        if (grant.refusal) throw grant.refusal
        return { acquired: false, retry: grant.retry }
      }
      const leaseToken = primitive.leaseToken(token, grant.claim)
      if (node.acks() < options.count) {
        // Not on enough replicas: a failover now could lose it, so it must not become a lease.
        await base.release(resource, leaseToken).catch(() => {})
        throw new ReplicationError(resource, node.acks(), options.count)
      }
      return { acquired: true, fence: grant.fence, token: leaseToken }
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
