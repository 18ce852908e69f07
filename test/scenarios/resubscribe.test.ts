// fencelock's ioredis pub/sub connection after a reconnect. ioredis resubscribes a subscriber
// connection by itself and leaves the promise of that SUBSCRIBE unhandled: closing the connection
// (locks.close()) before the reply came rejected it with "Connection is closed." as an unhandled
// rejection, which ends a Node process (a CI run lost a quorum test's worker to it: a node had
// restarted just before the worker closed). fencelock resubscribes its own connection, handled.
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { createLocks } from '../../src/index.js'
import { startFaultProxy, type FaultProxy } from '../../harness/fault-proxy.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { scriptCalls } from '../../harness/commandstats.js'
import { recordAcquires } from '../../harness/telemetry.js'
import { closeQuietly, sleep, uniquePrefix, until } from '../../harness/util.js'

describe.skipIf(!requireRedisOrSkip())('ioredis pub/sub connection, reconnecting twice in a row', () => {
  const cleanup: (() => Promise<unknown>)[] = []
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step().catch(() => {})
  })

  /**
   * A redis-server, a holder's instance on a direct connection and a waiter's behind a fault proxy
   * (reconnecting every 50 ms): the holder holds 'r', the waiter waits for it, queued and subscribed.
   */
  async function heldAndWaiting(name: string) {
    const redis: RedisProcess = await startRedis()
    cleanup.push(() => redis.stop())
    const proxy: FaultProxy = await startFaultProxy(redis)
    cleanup.push(() => proxy.close())
    const prefix = uniquePrefix(name)
    const direct = new Redis(redis.url)
    cleanup.push(async () => direct.disconnect())
    const viaProxy = new Redis(proxy.url, { retryStrategy: () => 50, maxRetriesPerRequest: null })
    viaProxy.on('error', () => {})
    cleanup.push(async () => viaProxy.disconnect())
    const holderLocks = createLocks({ redis: direct, prefix })
    const waiterLocks = createLocks({ redis: viaProxy, prefix })
    cleanup.push(() => closeQuietly([holderLocks, waiterLocks]))

    const held = await holderLocks.acquire('r', { ttl: 30_000 })
    const waiting = waiterLocks.acquire('r', { wait: 25_000 })
    // The wake-up channels (under the resource's hash tag), not the holder's revocation channel.
    const channels = async () => (await direct.call('PUBSUB', 'CHANNELS', `${prefix}{*`)) as string[]
    const subscribed = async () => ((await direct.call('PUBSUB', 'NUMSUB', ...(await channels()))) as (string | number)[])[1]
    await until('the waiter is queued', async () => (await holderLocks.inspect('r')).waiters === 1)
    await until('its SUBSCRIBE is answered (the channel has its subscriber)', async () => (await channels()).length === 1 && Number(await subscribed()) === 1)
    return { redis, proxy, direct, viaProxy, prefix, held, waiting, waiterLocks, channels }
  }

  it('no unhandled rejection when the instance closes while the resubscribe after a reconnect is unanswered', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => void unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    cleanup.push(async () => void process.off('unhandledRejection', onUnhandled))
    const { proxy, viaProxy, held, waiting, waiterLocks, channels } = await heldAndWaiting('resubscribe')

    // Replies come 400 ms late; the connections drop and come back within ~50 ms, and the pub/sub
    // connection's resubscribe goes out. Closing the instance before its reply comes ends that
    // connection by hand: ioredis rejects what it still waits for with "Connection is closed.".
    proxy.setDelay(400, { direction: 'down' })
    proxy.resetAll()
    // Back ~50 ms later; ready once its connection set-up is answered (~450 ms); the resubscribe
    // goes out then (requests are not delayed: Redis has it at once) and its reply comes ~400 ms
    // after: close in between, as soon as Redis has the resubscribe.
    await until('Redis dropped the old subscription', async () => (await channels()).length === 0, { every: 5 })
    await until('the client is ready again', () => viaProxy.status === 'ready', { timeout: 3_000 })
    await until('the resubscribe reached Redis (its reply is ~400 ms away)', async () => (await channels()).length === 1, { timeout: 3_000, every: 5 })
    await waiterLocks.close()
    expect(
      await waiting.then(
        () => 'acquired',
        (err: Error) => err.name,
      ),
    ).toBe('ClosedError')
    await sleep(600) // time must pass: the delayed replies (400 ms) come, and nothing may be left to reject
    proxy.heal()
    expect(unhandled.map(String)).toEqual([])
    await held.release()
  }, 40_000)

  it('after a reconnect the connection is subscribed again: a release wakes the waiter at once, not its re-check a ttl later', async () => {
    const acquires = recordAcquires()
    cleanup.push(async () => acquires.stop())
    const { redis, proxy, held, waiting, channels } = await heldAndWaiting('resubscribed')
    await redis.cli('CONFIG', 'RESETSTAT')
    proxy.resetAll()
    await until('Redis dropped the old subscription', async () => (await channels()).length === 0, { every: 5 })
    await until('the channel is subscribed again', async () => (await channels()).length === 1, { timeout: 3_000 })
    // The waiter's look after the reconnect is done: it sleeps until the holder's ttl (30 s).
    await until("the waiter's look after the reconnect ran", async () => (await scriptCalls(redis)) >= 1, { timeout: 3_000 })
    await held.release()
    const lease = await waiting
    await lease.release()
    const [event] = acquires.of('r').filter((e) => e.token === lease.token)
    expect(event?.wakes.at(-1)).toBe('release')
    expect(event?.wakes).not.toContain('recheck')
  }, 40_000)
})
