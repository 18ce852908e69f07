// Redis loses the lock behind the holder's back (DESIGN.md 3 and the fence promise): a restart
// with no data, a key that expires early (server clock jump) or is evicted. Fences must still
// grow, and the old holder must learn that it lost the lock.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest'
import { createLocks, fencedSet, FencelockError, LockLostError, type Lease, type Locks } from '../../src/index.js'
import { adapters, type TestClient } from '../../harness/clients.js'
import { requireRedisOrSkip } from '../../harness/redis-server.js'
import { closeQuietly, keysOf, uniquePrefix, untilFree, until } from '../../harness/util.js'
import { useFaultProxy, useRedis } from '../../harness/per-adapter.js'
import { record, recordAcquires, recordLosses } from '../../harness/telemetry.js'

const lostReason = (signal: AbortSignal) => (signal.reason as LockLostError | undefined)?.reason

/**
 * `promise`'s outcome (its value or its error), or `pending` if it has not settled within `ms`: a
 * bound on a hang, not a wait (a call that settles returns at once).
 */
const settledWithin = <T>(promise: Promise<T>, ms: number, pending: string): Promise<T | unknown> =>
  Promise.race([
    promise.then(
      (v) => v,
      (err: unknown) => err,
    ),
    new Promise((resolve) => setTimeout(() => resolve(pending), ms)),
  ])

describe.skipIf(!requireRedisOrSkip())('redis faults', () => {
  describe.each(adapters)('$name', (adapter) => {
    const server = useRedis()
    const proxy = useFaultProxy(server)
    let client: TestClient
    let other: TestClient
    let locks: Locks
    let rival: Locks
    let prefix: string
    let acquires: ReturnType<typeof recordAcquires>
    let extensions: ReturnType<typeof record<'fencelock:extend'>>
    beforeAll(() => {
      acquires = recordAcquires()
      extensions = record('fencelock:extend')
    })
    afterAll(() => {
      acquires.stop()
      extensions.stop()
    })
    // Fresh clients per test: one that a restart left dead must not fail every later test.
    beforeEach(async () => {
      client = await adapter.connect(server.url)
      other = await adapter.connect(server.url)
    })
    afterEach(async () => {
      await closeQuietly([locks, rival])
      await client?.disconnect()
      await other?.disconnect()
    })
    /**
     * After a restart: both clients answer again, by themselves (node-redis before 5.11 sometimes
     * never reconnected after a kill -9: see the crash test below; nothing is reopened by hand).
     */
    const clientsBack = async () => {
      const both = [client, other]
      // A PING is sent (again) to each client that has not answered yet.
      const answered = both.map(() => false)
      const ask = () => {
        both.forEach((c, i) => {
          if (!answered[i])
            void c.command('PING').then(
              (reply) => void (answered[i] ||= reply === 'PONG'),
              () => {},
            )
        })
        return answered.every(Boolean)
      }
      await until(`both ${adapter.name} clients answer PING after the restart`, ask, { timeout: 6_000, every: 200 })
    }
    /** The old lease is lost and its release changes nothing; the next one holds the lock and releases it. */
    const expectOnlyNextHolds = async (resource: string, old: Lease, next: Lease) => {
      expect(old.held).toBe(false)
      expect(await old.release()).toBe(false)
      expect((await rival.inspect(resource)).token).toBe(next.token)
      expect(await next.release()).toBe(true)
    }
    const setup = (name: string) => {
      prefix = uniquePrefix(name)
      locks = createLocks({ redis: client.raw, prefix })
      rival = createLocks({ redis: other.raw, prefix })
    }

    it("a crash whose listener still accepts (the client's reconnect reset in its handshake): once Redis answers again, the client and fencelock do, with nothing reopened by hand", async () => {
      // node-redis before 5.11 reported ready on that reset connection and never reconnected: every
      // command waited forever (redis/node-redis#3108, #3346). Its immediate first reconnect after a
      // kill -9 meets the dying server's listener so (here about one kill in fifteen).
      const crashing = await adapter.connect(proxy.url)
      const own = createLocks({ redis: crashing.raw, prefix: uniquePrefix('crash') })
      try {
        const first = await own.acquire('crash', { ttl: 5_000 })
        expect(await first.release()).toBe(true)
        proxy.crash()
        await until('the client reconnects into the crash and is reset in its handshake', () => proxy.crashResets() >= 1, { timeout: 10_000 })
        proxy.heal()
        // Bound: the client's reconnect pause (at most 200 ms here) and one acquire, with a 10x margin.
        const next = await settledWithin(own.tryAcquire('crash', { timeout: 5_000 }), 10_000, 'no outcome within 10 s')
        expect(next, String(next)).toMatchObject({ held: true })
        expect(await (next as Lease).release()).toBe(true)
      } finally {
        proxy.heal()
        await closeQuietly([own])
        await crashing.disconnect()
      }
    })

    it('a restart with no data (kill -9, restart empty) still yields a larger fence than any before it; the old holder is refused', async () => {
      setup('restart')
      const resource = 'restart'
      const fences: number[] = []
      for (let i = 0; i < 5; i++) {
        const lease = await locks.acquire(resource, { ttl: 5_000 })
        fences.push(lease.fence)
        await lease.release()
      }
      const old = await locks.acquire(resource, { ttl: 10_000 })
      fences.push(old.fence)
      expect(await fencedSet(client.raw, `${prefix}data`, 'old', old.fence)).toBe(true)
      await server.redis.kill9()
      await server.redis.restart()
      await clientsBack()
      const next = await rival.acquire(resource, { ttl: 5_000, wait: 5_000 })
      expect(next.fence).toBeGreaterThan(Math.max(...fences))
      expect(await fencedSet(other.raw, `${prefix}data`, 'new', next.fence)).toBe(true)
      // The old holder finds out at its next extension, and its write is refused.
      const extended = await old.extend().then(
        () => 'extended',
        (err: unknown) => err,
      )
      expect(extended).toBeInstanceOf(LockLostError)
      expect((extended as LockLostError).reason).toBe('refused')
      expect(old.signal.aborted).toBe(true)
      expect(lostReason(old.signal)).toBe('refused')
      expect(await fencedSet(client.raw, `${prefix}data`, 'stale', old.fence)).toBe(false)
      expect(await client.command('GET', `${prefix}data`)).toBe('new')
      expect(await old.release()).toBe(false)
      expect((await rival.inspect(resource)).token).toBe(next.token)
    })

    it("a restart with no data while a waiter waits: the reconnect wakes it and it gets the vanished lock promptly, not after the old holder's ttl", async () => {
      setup('restart-waiting')
      const resource = 'restart-waiting'
      const ttl = 8_000
      const old = await locks.acquire(resource, { ttl })
      const waiting = rival.acquire(resource, { ttl, wait: ttl })
      waiting.catch(() => {})
      // Subscribed too: a restart while the pub/sub connection is still opening is another case
      // (wakeups.test.ts: 'reset while it opens').
      await until('the waiter queued and subscribed', async () => {
        // Each process listens on its own channel under the resource's (`<channel>:<instance>`).
        const channels = (await client.command('PUBSUB', 'CHANNELS', `${keysOf(prefix, resource).channel}:*`)) as string[]
        return (await locks.inspect(resource)).waiters === 1 && channels.length === 1
      })
      await server.redis.kill9()
      await server.redis.restart()
      await clientsBack()
      const lease = await waiting
      expect(lease.fence).toBeGreaterThan(old.fence)
      await expect(old.extend()).rejects.toMatchObject({ name: 'LockLostError', reason: 'refused' })
      expect(await lease.release()).toBe(true)
      // The reconnect of its wake-up connection made it look again at once (resync), not its
      // re-check timer at the old holder's ttl (8 s).
      const [event] = acquires.of(resource).filter((e) => e.token === lease.token)
      expect(event?.wakes).toContain('resync')
      expect(event?.wakes).not.toContain('recheck')
    })

    it('Redis paused under an auto-extended holder: its signal aborts by its deadline (renewals unanswered); after resuming, the next holder gets a larger fence and the old lease stays lost', async () => {
      setup('redis-paused')
      const resource = 'redis-paused'
      const ttl = 600
      const old = await locks.acquire(resource, { ttl, autoExtend: true })
      server.redis.pause()
      try {
        let abortedAt = Number.NaN
        old.signal.addEventListener('abort', () => (abortedAt = performance.now()), { once: true })
        await until("the holder's signal aborted", () => old.signal.aborted, { timeout: ttl * 3 })
        // Promise 2: aborted by its own deadline (at most one ttl after the last renewal was sent,
        // before the pause). The expiry timer's lateness is the only slack: a few ms expected, and
        // 300 ms is more than 10x that on a loaded machine.
        expect(abortedAt - old.deadline).toBeLessThan(300)
        expect(lostReason(old.signal)).toBe('unreachable') // a renewal was waiting for Redis at the deadline
        await new Promise((resolve) => setTimeout(resolve, ttl)) // Redis' own clock runs on: the key is due
      } finally {
        server.redis.resume()
      }
      const next = await rival.acquire(resource, { ttl: 5_000, wait: 3_000 })
      expect(next.fence).toBeGreaterThan(old.fence)
      await expectOnlyNextHolds(resource, old, next)
    })

    it('Redis paused while a waiter waits for a free lock: it times out; once Redis resumes, the attempts it left in flight grant nothing that stays held and no queue place stays behind', async () => {
      setup('paused-waiter')
      const resource = 'paused-waiter'
      const held = await rival.acquire(resource, { ttl: 400 }) // expires during the pause
      server.redis.pause()
      let outcome: unknown
      try {
        outcome = await locks.acquire(resource, { ttl: 5_000, wait: 1_500 }).then(
          (lease) => lease,
          (err: unknown) => err,
        )
      } finally {
        server.redis.resume()
      }
      expect(['LockTimeoutError', 'RedisError']).toContain((outcome as Error).name)
      await untilFree(rival, resource, 2_000).catch(async (err: unknown) => {
        throw new Error(`${(err as Error).message}: ${JSON.stringify(await rival.inspect(resource))}`)
      })
      expect(await held.release()).toBe(false)
    })

    it("12. Redis paused while withLock runs: withLock still returns the result of fn by the lease's deadline (the release cannot hang it)", async () => {
      setup('withlock-down')
      const ttl = 1_000
      let settled: unknown = 'still pending'
      try {
        const running = locks.withLock(
          'withlock-down',
          async () => {
            server.redis.pause()
            return 'result of fn'
          },
          { ttl },
        )
        // Promise 12: settled by the lease's deadline (1 s); 10x margin, a bound on a hang.
        settled = await settledWithin(running, 10 * ttl, 'still pending 10 ttls later')
      } finally {
        server.redis.resume()
      }
      expect(settled).toBe('result of fn')
    })

    it('12. a release Redis answers only after its bound (paused past the ttl): the caller gets RedisError; the late answer reports the release, and loses nothing', async () => {
      setup('late-release')
      const ttl = 800
      const lease = await locks.acquire('late-release', { ttl })
      const released = record('fencelock:release')
      const lost = recordLosses()
      onTestFinished(() => {
        released.stop()
        lost.stop()
      })
      let outcome: unknown
      try {
        server.redis.pause()
        // Promise 12: bounded by the lease's validity (at least its ttl); 10x margin, a bound on a hang.
        outcome = await settledWithin(lease.release(), 10 * ttl, 'still pending 10 ttls later')
        // Redis' clock runs while it is paused: the key's ttl passes, so the release it runs on
        // resuming finds nothing to release.
        await until('the ttl passed in Redis too', () => performance.now() > lease.deadline + ttl, { timeout: 10 * ttl })
      } finally {
        server.redis.resume()
      }
      expect(outcome).toBeInstanceOf(FencelockError)
      expect((outcome as FencelockError).code).toBe('REDIS_ERROR')
      // The late answer: the release event says nothing was released; the lease, released by its
      // caller, is not reported lost by it, and its signal stays as it was.
      await until('the late answer reported', () => released.events.some((e) => e.token === lease.token), { timeout: 10 * ttl })
      expect(released.events.filter((e) => e.token === lease.token).map((e) => e.released)).toEqual([false])
      expect(lost.events.filter((e) => e.token === lease.token)).toEqual([])
      expect(lease.signal.aborted).toBe(false)
    })

    it("12. Redis paused during a manual extend(): it settles by the lease's deadline with LockLostError instead of hanging", async () => {
      setup('extend-down')
      const ttl = 800
      const lease = await locks.acquire('extend-down', { ttl })
      let settled: unknown = 'still pending'
      try {
        server.redis.pause()
        // Promise 12: settled by the lease's deadline (0.8 s); 10x margin, a bound on a hang.
        settled = await settledWithin(
          lease.extend(ttl).then(() => 'extended'),
          10 * ttl,
          'still pending 10 ttls later',
        )
      } finally {
        server.redis.resume()
      }
      expect(settled).toBeInstanceOf(LockLostError)
      // Lost because the deadline passed with Redis silent, not refused by it.
      expect((settled as LockLostError).reason).toBe('unreachable')
      expect(lease.signal.aborted).toBe(true)
    })

    it('12. Redis paused during release and extend by token and inspect: each rejects with RedisError within its bound instead of hanging', async () => {
      setup('by-token-down')
      const lease = await locks.acquire('by-token-down', { ttl: 5_000 })
      const ttl = 600
      const byToken = createLocks({ redis: other.raw, prefix, ttl })
      const results: unknown[] = []
      try {
        server.redis.pause()
        // Promise 12: each gives up by its own bound, the instance's ttl for a release and inspect,
        // the new ttl minus drift for an extension (0.6 s at most); 10x margin, a bound on a hang.
        const bounded = (p: Promise<unknown>) => settledWithin(p, 10 * ttl, 'still pending')
        results.push(await bounded(byToken.release('by-token-down', lease.token)))
        results.push(await bounded(byToken.extend('by-token-down', lease.token, 500)))
        results.push(await bounded(byToken.inspect('by-token-down')))
      } finally {
        server.redis.resume()
        await closeQuietly([byToken])
      }
      for (const [i, result] of results.entries()) {
        const call = ['release', 'extend', 'inspect'][i]
        expect(result, call).toBeInstanceOf(FencelockError)
        expect((result as FencelockError).code, call).toBe('REDIS_ERROR')
        // Gave up for want of a reply within its bound (it was no refusal: Redis was paused).
        expect((result as Error).message, call).toMatch(/No reply from Redis within \d+ ms/)
      }
      // The release reached Redis and runs once it resumes (the caller was told its outcome is
      // unknown): the lock ends free, and the lease's own release finds it gone.
      await until('the queued release ran after the resume', async () => !(await locks.inspect('by-token-down')).held, { timeout: 3_000 })
      expect(await lease.release()).toBe(false)
    })

    it("3. lock key expires early (server clock jumps forward): the next holder gets a larger fence; the old holder's extend is refused and release leaves the new lock alone", async () => {
      setup('early-expiry')
      const resource = 'early'
      const old = await locks.acquire(resource, { ttl: 10_000 })
      await client.command('PEXPIRE', keysOf(prefix, resource).lock, 1)
      const next = await rival.acquire(resource, { ttl: 5_000, wait: 2_000 })
      expect(next.fence).toBeGreaterThan(old.fence)
      expect(old.held).toBe(true) // its local deadline has not passed: only Redis can tell it
      const extended = await old.extend().then(
        () => 'extended',
        (err: unknown) => err,
      )
      expect(extended).toBeInstanceOf(LockLostError)
      expect((extended as LockLostError).reason).toBe('refused')
      expect(lostReason(old.signal)).toBe('refused')
      await expectOnlyNextHolds(resource, old, next)
    })

    it('3. every key of the resource evicted (lock and fence key): the next fence is still larger', async () => {
      setup('evicted')
      const resource = 'evicted'
      const old = await locks.acquire(resource, { ttl: 10_000 })
      const k = keysOf(prefix, resource)
      await client.command('DEL', k.lock, k.fence, k.queue, k.queueExpiry)
      const next = await rival.acquire(resource, { ttl: 5_000, wait: 0 })
      expect(next.fence).toBeGreaterThan(old.fence)
      await expect(old.extend()).rejects.toMatchObject({ name: 'LockLostError', reason: 'refused' })
      expect(await next.release()).toBe(true)
    })

    it('3. lock key evicted under an auto-extended lease: its next renewal is refused and the signal aborts with reason "refused" well before the deadline', async () => {
      setup('evicted-auto')
      const resource = 'evicted-auto'
      const ttl = 900
      const old = await locks.acquire(resource, { ttl, autoExtend: true })
      await client.command('DEL', keysOf(prefix, resource).lock)
      const next = await rival.acquire(resource, { ttl: 5_000, wait: 0 })
      await until("the old lease's signal aborted", () => old.signal.aborted, { timeout: ttl * 2 })
      // A renewal runs every ttl/3: the refusal (Redis said no to a renewal) comes long before the
      // old deadline would; a loss by the clock would say 'expired'.
      expect(lostReason(old.signal)).toBe('refused')
      expect(extensions.events.filter((e) => e.token === old.token).at(-1)?.outcome).toBe('lost')
      expect((await rival.inspect(resource)).token).toBe(next.token)
      expect(await next.release()).toBe(true)
    })
  })
})
