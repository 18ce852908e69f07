import type { Backend, LockInfo } from './backend.js'
import { ReplicationError } from '../errors/errors.js'
import type { AttemptRequest, NodeGrant, Primitive } from './primitive.js'
import type { Attempt } from './backend.js'
import { Batcher } from './group.js'
import { clusterSlot } from '../util/keys.js'
import type { RedisAdapter } from '../redis/adapter.js'
import { handDecoded, type Exec } from '../lua/binding.js'
import { SingleBackend } from './single.js'
import { promised, type Into } from '../util/into.js'

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
 * WAIT (see group.ts). Release, leave, inspect and the rest are the single node's.
 */
export class ReplicatedBackend<Info = LockInfo> extends SingleBackend<Info> {
  declare readonly extendMany: Backend<Info>['extendMany']
  readonly #wait: readonly [count: number, timeout: number]
  readonly #count: number
  /** The attempts of one turn: one script call and one WAIT for all; each grant is judged by that WAIT. */
  readonly #attempts: Batcher<Call, Attempt> | undefined

  constructor(redis: RedisAdapter, primitive: Primitive<unknown, Info>, maxTtl: number, options: ReplicasOptions) {
    super(redis, primitive, maxTtl)
    this.#wait = [options.count, options.timeout]
    this.#count = options.count
    const { acquireMany, routeKey } = primitive
    this.#attempts =
      acquireMany && routeKey
        ? new Batcher<Call, Attempt>({
            one: (call, into) => void this.#attemptOne(call).then(into.value, into.error),
            many: async (calls) => {
              const node = this.#waitingNode()
              const grants = await acquireMany.call(primitive, node.exec, calls)
              const acks = node.acks()
              return Promise.all(grants.map((grant, i) => (grant instanceof Error ? grant : this.#settle(calls[i]!, grant, acks).catch((err: Error) => err))))
            },
            ...(redis.isCluster ? { key: (call: Call) => clusterSlot(primitive.routeKey!(call.resource)) } : {}),
          })
        : undefined
    // Renewals of several leases: one script call and one WAIT for all, the same verdict for each.
    if (primitive.extendMany && this.batchKey) {
      this.extendMany = async (leases) => {
        const node = this.#waitingNode()
        const extended = await primitive.extendMany!(node.exec, leases)
        const acks = node.acks()
        return extended.map((ok, i) => (ok && acks < this.#count ? new ReplicationError(leases[i]!.resource, acks, this.#count, 'extension') : ok))
      }
    }
  }

  override attempt(resource: string, token: string, ttl: number, waiter: string, into: Into<Attempt>): void {
    const call = { resource, request: { token, ttl, waiter } }
    if (this.#attempts) this.#attempts.submit(call, into)
    else void this.#attemptOne(call).then(into.value, into.error)
  }

  override async extend(resource: string, token: string, ttl: number): Promise<boolean> {
    const node = this.#waitingNode()
    if (!(await this.primitive.extend(node.exec, resource, token, ttl))) return false
    // The replicas may still have the old expiry; the lease keeps its old deadline, which they honour.
    if (node.acks() < this.#count) throw new ReplicationError(resource, node.acks(), this.#count, 'extension')
    return true
  }

  /** A node whose script calls are each followed by WAIT; `acks()` is the last call's acknowledgements. */
  #waitingNode(): { exec: Exec; acks: () => number } {
    let acks = 0
    const exec: Exec = (script, keys, args, decode, into) => {
      this.redis.evalThenWait(script, keys, args, this.#wait).then(([reply, acknowledged]) => {
        acks = acknowledged
        handDecoded(decode, into, reply)
      }, into.error)
    }
    return { exec, acks: () => acks }
  }

  /** What a grant that `acks` replicas acknowledged becomes: a lease, or (too few) a ReplicationError once rolled back. */
  async #settle({ resource, request }: Call, grant: NodeGrant, acks: number): Promise<Attempt> {
    if (!grant.granted) {
      if (grant.refusal) throw grant.refusal
      return { acquired: false, retry: grant.retry }
    }
    const leaseToken = this.primitive.leaseToken(request.token, grant.claim)
    if (acks < this.#count) {
      // Not on enough replicas: a failover now could lose it, so it must not become a lease.
      await promised<boolean>((into) => this.release(resource, leaseToken, into)).catch(() => {})
      throw new ReplicationError(resource, acks, this.#count)
    }
    return { acquired: true, fence: grant.fence, token: leaseToken }
  }

  async #attemptOne(call: Call): Promise<Attempt> {
    const node = this.#waitingNode()
    const grant = await promised<NodeGrant>((into) => this.primitive.acquire(node.exec, call.resource, call.request, into))
    return this.#settle(call, grant, node.acks())
  }
}
