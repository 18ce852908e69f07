import type { Attempt, Backend } from '../backend.js'
import { ReplicationError } from '../errors.js'
import { resourceKeys } from '../keys.js'
import { isNoScript, type RedisAdapter } from '../redis/adapter.js'
import type { LuaScript } from '../scripts/index.js'
import { scripts } from '../scripts/index.js'

export interface ReplicasOptions {
  prefix: string
  fenceRetention: number
  waiterGrace: number
  /** Replicas that must acknowledge the lock write. */
  count: number
  /** How long WAIT may block, in ms. */
  timeout: number
}

const toNumber = (value: unknown): number => (typeof value === 'number' ? value : Number(value))

/**
 * Runs `script`, then `WAIT count timeout`, pipelined on the same connection: WAIT is written right
 * behind the script, so it adds no round trip, only the time the replicas take to acknowledge.
 * If the script had to be re-sent as EVAL (NOSCRIPT after a restart), the first WAIT ran before
 * it and proves nothing: WAIT is sent again after the EVAL.
 */
async function evalThenWait(
  redis: RedisAdapter,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
  wait: readonly string[],
): Promise<[unknown, number]> {
  const body = [String(keys.length), ...keys, ...args.map(String)]
  const evaluated = redis.command(['EVALSHA', script.sha, ...body], keys[0])
  const acked = redis.command(wait, keys[0])
  try {
    const reply = await evaluated
    return [reply, toNumber(await acked)]
  } catch (err) {
    acked.catch(() => {})
    if (!isNoScript(err)) throw err
    const reply = await redis.command(['EVAL', script.source, ...body], keys[0])
    return [reply, toNumber(await redis.command(wait, keys[0]))]
  }
}

/**
 * The single-Redis mutex, but a lock (and each extension) only counts once `count` replicas
 * acknowledged it, so a failover to one of them keeps the lock and its fence. Release, leave and
 * inspect are the plain mutex's.
 */
export function replicatedBackend(inner: Backend, redis: RedisAdapter, options: ReplicasOptions): Backend {
  const retention = String(options.fenceRetention)
  const grace = String(options.waiterGrace)
  const wait = ['WAIT', String(options.count), String(options.timeout)]
  return {
    ...inner,
    async attempt(resource, token, ttl, waiter): Promise<Attempt> {
      const k = resourceKeys(options.prefix, resource)
      const [reply, acks] = await evalThenWait(redis, scripts.mutexAcquire, [k.lock, k.fence, k.queue, k.queueExpiry], [token, ttl, retention, waiter, grace], wait)
      const [code, value] = reply as [number, number]
      if (toNumber(code) !== 1) return { acquired: false, retry: toNumber(value) }
      if (acks < options.count) {
        // Not on enough replicas: a failover now could lose it, so it must not become a lease.
        await inner.release(resource, token).catch(() => {})
        throw new ReplicationError(resource, acks, options.count)
      }
      return { acquired: true, fence: toNumber(value) }
    },
    async extend(resource, token, ttl) {
      const k = resourceKeys(options.prefix, resource)
      const [reply, acks] = await evalThenWait(redis, scripts.mutexExtend, [k.lock], [token, ttl], wait)
      if (toNumber(reply) !== 1) return false
      // The replicas may still have the old expiry; the lease keeps its old deadline, which they honour.
      if (acks < options.count) throw new ReplicationError(resource, acks, options.count, 'extension')
      return true
    },
  }
}
