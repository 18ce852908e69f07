// One redis-semaphore lock on one Redis node, in the peer's key layout, through fencelock's
// adapters (ioredis, iovalkey, node-redis; single node or cluster) and scripts; and the quorum of
// independent nodes that the Redlock* classes use (the peer's rules: a majority, undone otherwise).
import type { Exec } from '../../lua/binding.js'
import { rsLeave, rsMutexAcquire, rsMutexRefresh, rsMutexRelease, rsSemaphoreAcquire, rsSemaphoreRefresh, rsSemaphoreRelease } from '../../lua/embedded.js'
import { adapterFor } from '../../redis/index.js'
import { scriptRunner } from '../../redis/script-runner.js'
import { subscriberFor, type SharedSubscriber } from '../../redis/subscriber.js'
import { besideKey } from './keys.js'

/** How long fencelock's fence counter outlives its last use (ms): a day, as in createLocks. */
const FENCE_RETENTION = 86_400_000

/** The fence counter's name beside a peer key (see keys.ts). */
export const fenceKey = (peerKey: string): string => besideKey(peerKey, ':fencelock:F')

/**
 * What one attempt answered: the fence when granted; when refused, whether every holder is an
 * upgraded process (`woken`: its release publishes, so a waiter may wait for that instead of
 * polling) and the ms after which looking again is worth it anyway (`retry`: the lock's expiry).
 */
export type Granted = { readonly ok: true; readonly fence: number } | { readonly ok: false; readonly woken?: boolean; readonly retry?: number }

/** How long a waiter keeps its place in line past its next attempt (ms): a process that stops attempting loses it then. */
const GRACE = 1_000

/** An upgraded waiter's place in the FIFO line: `waiter` (`<permits>|<identifier>`), and how long it still waits. */
export interface Line {
  readonly waiter: string
  readonly remaining: number
  readonly retryInterval: number
}

const lineArgs = (line: Line | undefined) => [line?.waiter ?? '', Math.max(0, Math.round(line?.remaining ?? 0)), line?.retryInterval ?? 0, GRACE] as const

/** The operations a lock kind runs on one node; `channel`: where its releases wake the upgraded waiters. */
export interface Store {
  readonly channel: string
  /** One attempt; with a `line`, in FIFO order among the upgraded waiters (none: the line is ignored, as old processes do). */
  acquire(exec: Exec, identifier: string, lockTimeout: number, line?: Line): Promise<Granted>
  /** A waiter that gives up leaves the line. */
  leave(exec: Exec, waiter: string): Promise<void>
  refresh(exec: Exec, identifier: string, lockTimeout: number): Promise<boolean>
  release(exec: Exec, identifier: string): Promise<void>
}

const granted = (reply: readonly unknown[]): Granted =>
  Number(reply[0]) === 1 ? { ok: true, fence: Number(reply[1]) } : { ok: false, retry: Number(reply[1]), woken: Number(reply[2]) === 1 }

/** redis-semaphore's mutex: the string `mutex:<key>` holding the identifier. */
export function mutexStore(key: string): Store {
  const upgraded = besideKey(key, ':fencelock:H')
  const channel = besideKey(key, ':fencelock:W')
  const [queue, queueExpiry] = [besideKey(key, ':fencelock:Q'), besideKey(key, ':fencelock:X')]
  const keys = [key, fenceKey(key), upgraded, queue, queueExpiry] as const
  return {
    channel,
    acquire: async (exec, id, ttl, line) => granted(await rsMutexAcquire.run(exec, keys, [id, ttl, FENCE_RETENTION, ...lineArgs(line)])),
    leave: async (exec, waiter) => void (await rsLeave.run(exec, [queue, queueExpiry], [waiter, channel])),
    refresh: async (exec, id, ttl) => Number(await rsMutexRefresh.run(exec, [key, upgraded], [id, ttl])) === 1,
    release: async (exec, id) => void (await rsMutexRelease.run(exec, [key, upgraded], [id, channel])),
  }
}

/** redis-semaphore's semaphore (`permits` 0: member = identifier) or multi-semaphore (n members `<id>_i`). */
export function semaphoreStore(key: string, limit: number, permits: number): Store {
  const upgraded = besideKey(key, ':fencelock:U')
  const channel = besideKey(key, ':fencelock:W')
  const [queue, queueExpiry] = [besideKey(key, ':fencelock:Q'), besideKey(key, ':fencelock:X')]
  const keys = [key, fenceKey(key), upgraded, queue, queueExpiry] as const
  return {
    channel,
    acquire: async (exec, id, ttl, line) => granted(await rsSemaphoreAcquire.run(exec, keys, [limit, id, ttl, permits, FENCE_RETENTION, ...lineArgs(line)])),
    leave: async (exec, waiter) => void (await rsLeave.run(exec, [queue, queueExpiry], [waiter, channel])),
    refresh: async (exec, id, ttl) => Number(await rsSemaphoreRefresh.run(exec, [key, upgraded], [id, ttl, permits])) === 1,
    release: async (exec, id) => void (await rsSemaphoreRelease.run(exec, [key, upgraded], [id, permits, channel])),
  }
}

/** The little redis-semaphore asked of a client ("ioredis-like": any object with evalsha and eval). */
/** An "ioredis-like" client fencelock has no adapter for, as redis-semaphore accepts one: evalsha and eval. */
export interface EvalClient {
  evalsha(sha: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>
  eval(source: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>
}

const isEvalClient = (client: unknown): client is EvalClient =>
  typeof client === 'object' && client !== null && typeof (client as EvalClient).evalsha === 'function' && typeof (client as EvalClient).eval === 'function'

/**
 * The adapters' one script path (src/redis/script-runner.ts: EVAL first, then EVALSHA, EVAL again
 * on NOSCRIPT, failures classified) on an ioredis-like client fencelock has no adapter for.
 */
const evalOn = (client: EvalClient): Exec => {
  const runner = scriptRunner(
    {
      evalsha: (sha, keys, args) => client.evalsha(sha, keys.length, ...keys, ...args),
      eval: (source, keys, args) => client.eval(source, keys.length, ...keys, ...args),
      command: (args) => Promise.reject(new Error(`${args[0]} is not sent through an ioredis-like client without an adapter`)),
    },
    () => false,
  )
  return runner.evalScript
}

/**
 * Runs scripts on `client` through its fencelock adapter (ioredis, iovalkey, node-redis: EVALSHA,
 * EVAL on NOSCRIPT, their failures typed); another ioredis-like client through its own evalsha /
 * eval, as redis-semaphore accepted it (test/compat/redis-semaphore-eval-client.test.ts).
 */
export function execOn(client: unknown): Exec {
  return connectionOf(client).exec
}

/** A client's script runner, and its shared pub/sub connection where fencelock has an adapter for it. */
export function connectionOf(client: unknown): { exec: Exec; subscriber(): SharedSubscriber | undefined } {
  let made: { exec: Exec; subscriber: SharedSubscriber | undefined } | undefined
  const make = () => {
    if (made) return made
    try {
      const adapter = adapterFor(client, 'client')
      made = { exec: adapter.evalScript, subscriber: subscriberFor(adapter) }
    } catch (err) {
      if (!isEvalClient(client)) throw err
      made = { exec: evalOn(client), subscriber: undefined }
    }
    return made
  }
  return { exec: (script, keys, args, decode, into) => make().exec(script, keys, args, decode, into), subscriber: () => make().subscriber }
}

/** The peer's majority of `count` nodes. */
export const quorumOf = (count: number): number => Math.round((count + 1) / 2)

/**
 * A store over independent nodes, as redis-semaphore's Redlock* classes decide: acquired when a
 * majority granted (else undone everywhere); refreshed when a majority refreshed (the others are
 * acquired again), else released everywhere. The fence is the largest any granting node returned.
 */
export function redlockStore(
  store: Store,
  nodes: readonly Exec[],
): { acquire(id: string, ttl: number): Promise<Granted>; refresh(id: string, ttl: number): Promise<boolean>; release(id: string): Promise<void> } {
  const quorum = quorumOf(nodes.length)
  const releaseAll = (id: string) => Promise.all(nodes.map((exec) => store.release(exec, id).catch(() => {})))
  return {
    async acquire(id, ttl) {
      const results = await Promise.all(nodes.map((exec) => store.acquire(exec, id, ttl).catch((): Granted => ({ ok: false }))))
      const won = results.filter((r) => r.ok)
      if (won.length >= quorum) return { ok: true, fence: Math.max(...won.map((r) => (r.ok ? r.fence : 0))) }
      await releaseAll(id)
      return { ok: false }
    },
    async refresh(id, ttl) {
      const results = await Promise.all(nodes.map((exec) => store.refresh(exec, id, ttl).catch(() => false)))
      const refreshed = results.filter(Boolean).length
      if (refreshed >= quorum) {
        await Promise.all(nodes.map((exec, i) => (results[i] ? undefined : store.acquire(exec, id, ttl).catch(() => undefined))))
        return true
      }
      await releaseAll(id)
      return false
    },
    release: async (id) => void (await releaseAll(id)),
  }
}
