// Processes end by themselves: after close() and quitting the client nothing (timer, socket,
// reconnect loop) keeps them alive, even when Redis went away mid-acquire (DESIGN.md 12).
import type { EventEmitter } from 'node:events'
import { createClient } from 'redis'
import { afterEach, describe, expect, it } from 'vitest'
import { createLocks } from '../../src/index.js'
import { adapters } from '../../harness/clients.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { killAllWorkers, spawnWorker } from '../../harness/spawn.js'
import { uniquePrefix, until } from '../../harness/util.js'

/** The wait of an acquisition that meets Redis down. */
const WAIT = 1_000

/**
 * Nothing kept the worker alive once it let go of everything: a worker still running 0.9 s after
 * that reports its active handles and timers on stderr ("worker still alive"; harness/workers).
 */
const expectNothingKeptAlive = (worker: { stderr(): string }) => expect(worker.stderr()).not.toMatch(/worker still alive/)

describe.skipIf(!requireRedisOrSkip())('lifecycle', () => {
  const servers: RedisProcess[] = []
  const server = async () => {
    const redis = await startRedis()
    servers.push(redis)
    return redis
  }
  afterEach(async () => {
    await killAllWorkers()
    await Promise.all(servers.splice(0).map((s) => s.stop()))
  })

  describe.each(adapters)('$name', (adapter) => {
    it('a script that acquires, releases, closes and quits exits by itself within ~1 s', async () => {
      const redis = await server()
      const prefix = uniquePrefix('life')
      const worker = spawnWorker('lifecycle', adapter.name, redis.url, { prefix, resource: 'life' })
      const closed = await worker.next('closed', 15_000)
      expect(closed.released).toBe(true)
      const exit = await worker.exited
      expect(exit.code).toBe(0)
      expectNothingKeptAlive(worker)
    })

    it('locks.close() rejects a pending wait with ClosedError, the waiter leaves the queue, and the process still exits by itself', async () => {
      const redis = await server()
      const prefix = uniquePrefix('life-wait')
      const worker = spawnWorker('lifecycle', adapter.name, redis.url, { prefix, resource: 'life', waiter: true })
      const closed = await worker.next('closed', 15_000)
      expect(closed.waiterOutcome).toMatchObject({ name: 'ClosedError', code: 'LOCKS_CLOSED', waitersBeforeClose: 1 })
      const exit = await worker.exited
      expect(exit.code).toBe(0)
      expectNothingKeptAlive(worker)
      const client = await adapter.connect(redis.url)
      const locks = createLocks({ redis: client.raw, prefix })
      expect(await locks.inspect('life')).toMatchObject({ held: false, waiters: 0 })
      await locks.close()
      await client.quit()
    })

    for (const fault of ['stopped', 'paused'] as const) {
      /** A worker that acquires with `ttl` and a wait of WAIT once Redis is `fault`; its outcome. */
      const downAtAcquire = async (ttl: number) => {
        const redis = await server()
        const worker = spawnWorker('down', adapter.name, redis.url, { prefix: uniquePrefix('down'), resource: 'down', ttl, wait: WAIT })
        await worker.next('ready', 15_000)
        if (fault === 'stopped') await redis.stop()
        else redis.pause()
        worker.send('go')
        // Promise 12: a typed error within the wait deadline, no hang. The bound is the wait with a
        // 10x margin: an outcome later than that (a hang never settles) fails this wait for it.
        const outcome = await worker.next('outcome', 10 * WAIT)
        expect(outcome.acquired).toBe(false)
        const error = outcome.error as { name: string; message: string }
        expect(['RedisError', 'LockTimeoutError']).toContain(error.name)
        // What ended it names the bound it kept: no reply within the attempt's limit (the wait at
        // most), a wait that timed out, or Redis failing until the wait ran out.
        expect(error.message).toMatch(/No reply from Redis within \d+ ms|Timed out after \d+ ms|Redis failed while waiting \d+ ms/)
        return { worker, outcome }
      }

      it(`12. Redis ${fault} at acquire (default ttl 10 s, wait 1 s): acquire rejects with a typed error within the wait deadline`, async () => {
        await downAtAcquire(10_000)
      })

      it(`12. Redis ${fault} at acquire (ttl shorter than the wait): after the typed error, close() and a forced disconnect let the process exit by itself`, async () => {
        const { worker } = await downAtAcquire(400)
        await worker.next('closed', 2_000)
        await until('the worker exited by itself after closing', () => worker.hasExited(), { timeout: 3_000 }).catch(() => {
          throw new Error(`still running 3 s after closing: ${worker.stderr()}`)
        })
        expect((await worker.exited).code).toBe(0)
        expectNothingKeptAlive(worker)
      })
    }
  })
  // node-redis sleeps between reconnect attempts on a timer that destroy() does not cancel: a
  // connection of fencelock's that inherited the caller's long backoff kept the process alive for
  // up to that long after close() (DESIGN.md 12: no leaked timer). The caller's own client is
  // theirs; fencelock's pub/sub connection retries on short pauses of its own and stops with close().
  it("node-redis: close() while fencelock's pub/sub connection waits to reconnect leaves no long retry timer behind", async () => {
    const redis = await server()
    const prefix = uniquePrefix('life-retry')
    const client = createClient({ url: redis.url, socket: { reconnectStrategy: () => 3_000 } })
    client.on('error', () => {})
    await client.connect()
    const ours: ReturnType<typeof client.duplicate>[] = []
    const duplicate = client.duplicate.bind(client)
    client.duplicate = ((...args: Parameters<typeof duplicate>) => {
      const connection = duplicate(...args)
      ours.push(connection)
      return connection
    }) as typeof client.duplicate
    const locks = createLocks({ redis: client, prefix })
    const held = await locks.acquire('retry', { ttl: 30_000 })
    const waiting = locks.acquire('retry', { wait: 20_000 }).then(
      () => 'acquired',
      (err: Error) => err.name,
    )
    await until('the waiter is subscribed', async () => (await locks.inspect('retry')).waiters === 1)
    expect(ours).toHaveLength(1)
    const [sub] = ours
    await redis.stop()
    // The loss, then a refused attempt: each is followed by a pause before the next attempt. (Not
    // events.once: it rejects when 'error' comes first, and node-redis emits the loss's 'error' and
    // 'reconnecting' in either order.)
    await next(sub!, 'reconnecting')
    await next(sub!, 'error')
    const closing = performance.now()
    await locks.close()
    client.destroy()
    expect(await waiting).toBe('ClosedError')
    let ended: number | undefined
    void next(sub!, 'reconnecting').then(() => (ended = performance.now()))
    await until('the retry pause ended', () => ended !== undefined, { timeout: 5_000 }).catch(() => {})
    // Its pause ends soon after close() (no new socket follows: the loop sees the client closed).
    // The pause is fencelock's own (at most 300 ms), not the caller's 3 s: the bound tells them apart.
    expect(ended, 'the retry pause outlived close() by 5 s').toBeDefined()
    expect(ended! - closing).toBeLessThan(3_000 / 2)
    expect(sub!.isOpen).toBe(false)
    void held
  })
})

/** The next `event` of `emitter` (whatever other events, 'error' included, come meanwhile). */
function next(emitter: Pick<EventEmitter, 'once'>, event: string): Promise<void> {
  return new Promise((resolve) => void emitter.once(event, () => resolve()))
}
