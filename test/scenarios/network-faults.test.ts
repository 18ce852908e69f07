// Failure scenarios on the wire between one client and one Redis (DESIGN.md 2 and 8), through
// the in-process fault proxy: replies delayed past the ttl, replies lost and the command retried.
import { afterEach, expect, it } from 'vitest'
import { createLocks, LockLostError, RedisError, type Lease, type Locks } from '../../src/index.js'
import { scripts } from '../../src/lua/index.js'
import type { TestClient } from '../../harness/clients.js'
import type { RedisProcess } from '../../harness/redis-server.js'
import { closeQuietly, keysOf, pttl, uniquePrefix, untilFree, until } from '../../harness/util.js'
import { describeRedis, perAdapter, useFaultProxy } from '../../harness/per-adapter.js'

/** Settles `promise` into a plain outcome, or 'pending' if it has not settled within `ms`. */
const outcome = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([
    promise.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
    new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), ms)),
  ])

describeRedis('network faults', (server) => {
  const proxy = useFaultProxy(server)

  perAdapter(server, (t) => {
    let faulty: TestClient // through the proxy (t.client goes straight to Redis)
    let direct: Locks
    let locks: Locks
    let prefix: string
    const setup = async (name: string, options: { driftFactor?: number } = {}) => {
      prefix = uniquePrefix(name)
      faulty = await t.adapter.connect(proxy.url)
      locks = createLocks({ redis: faulty.raw, prefix, ...options })
      direct = createLocks({ redis: t.client.raw, prefix })
    }
    /** Heals the proxy and resets its connections (a reply still owed is lost); then `pending`'s outcome, which must have come. */
    const settledAfterReset = async <T>(pending: ReturnType<typeof outcome<T>>) => {
      proxy.heal()
      proxy.resetAll()
      const settled = await pending
      expect(settled).not.toBe('pending')
      return settled
    }
    afterEach(async () => {
      proxy.heal()
      await closeQuietly([locks, direct])
      await faulty?.disconnect()
    })

    it('2. acquire reply delayed past the ttl: tryAcquire throws RedisError within the ttl, and the lock does not stay held', async () => {
      await setup('late-try')
      const ttl = 400
      proxy.setDelay(ttl + 300, { direction: 'down' })
      const started = performance.now()
      await expect(locks.tryAcquire('late', { ttl })).rejects.toBeInstanceOf(RedisError)
      expect(performance.now() - started).toBeLessThan(ttl + 200)
      await until('the lock is free', async () => !(await direct.inspect('late')).held, { timeout: 2_000 })
      expect(await pttl(t.client, keysOf(prefix, 'late').lock)).toBe(-2)
    })

    it('2. acquire reply delayed past the ttl: acquire rejects with RedisError at its deadline, never with a stale lease; nothing is left held or queued', async () => {
      await setup('late-acquire')
      const ttl = 400
      const wait = 1_500
      proxy.setDelay(ttl + 300, { direction: 'down' })
      const started = performance.now()
      const result = await outcome(locks.acquire('late', { ttl, wait }), wait + 2_000)
      const elapsed = performance.now() - started
      expect(result).not.toBe('pending')
      expect((result as { error?: unknown }).error, `acquire resolved: ${JSON.stringify(result)}`).toBeInstanceOf(RedisError)
      expect(elapsed).toBeLessThan(wait + 300)
      proxy.heal()
      await untilFree(direct, 'late', 2_000)
    })

    it('2. validity is counted from before the request was sent: a slow acquire or extend reply shortens the lease by its delay', async () => {
      await setup('validity')
      const ttl = 1_000
      const drift = Math.floor(ttl * 0.01) + 2
      const delay = 300
      proxy.setDelay(delay, { direction: 'down' })
      let sent = performance.now()
      const lease = await locks.acquire('validity', { ttl, wait: 0 })
      expect(lease.deadline - sent).toBeLessThanOrEqual(ttl - drift + 50) // the library reads its clock after `sent` (a GC pause may sit in between); counted from the reply it would be 300 ms more
      expect(lease.remaining).toBeLessThanOrEqual(ttl - drift - delay + 5)
      expect(lease.remaining).toBeGreaterThan(0)
      sent = performance.now()
      await lease.extend(ttl)
      expect(lease.deadline - sent).toBeLessThanOrEqual(ttl - drift + 50) // the library reads its clock after `sent` (a GC pause may sit in between); counted from the reply it would be 300 ms more
      expect(lease.remaining).toBeLessThanOrEqual(ttl - drift - delay + 5)
      // Redis keeps it at least as long as the client trusts it.
      proxy.heal()
      const redisLeft = Number(await t.client.command('PTTL', keysOf(prefix, 'validity').lock))
      expect(redisLeft).toBeGreaterThanOrEqual(lease.remaining - 5)
      expect(await lease.release()).toBe(true)
    })

    it("a partition shorter than the lease's validity does not lose an auto-extended lease", async () => {
      await setup('short-partition')
      const resource = 'short-partition'
      const ttl = 3_000
      const lease = await locks.acquire(resource, { ttl, autoExtend: true })
      await new Promise((resolve) => setTimeout(resolve, 100))
      proxy.partition()
      await new Promise((resolve) => setTimeout(resolve, 600))
      proxy.heal()
      // Two renewal periods later: the renewal that the partition held up has gone through.
      await new Promise((resolve) => setTimeout(resolve, (2 * ttl) / 3 + 500))
      expect(lease.signal.aborted, String((lease.signal.reason as Error | undefined)?.message)).toBe(false)
      expect(lease.held).toBe(true)
      expect((await direct.inspect(resource)).token).toBe(lease.token)
      expect(await lease.release()).toBe(true)
    })

    it('a partition while a waiter waits: the release happens during it, and after healing the waiter acquires within one ttl of the release', async () => {
      await setup('partition-wait')
      const resource = 'partition-wait'
      const ttl = 5_000
      const held = await direct.acquire(resource, { ttl })
      const waiting = locks.acquire(resource, { ttl, wait: 15_000 })
      waiting.catch(() => {})
      await until('the waiter queued', async () => (await direct.inspect(resource)).waiters === 1)
      proxy.partition()
      await new Promise((resolve) => setTimeout(resolve, 300))
      const releasedAt = performance.now()
      expect(await held.release()).toBe(true)
      await new Promise((resolve) => setTimeout(resolve, 700))
      proxy.heal()
      const lease = await waiting
      const latency = performance.now() - releasedAt
      expect(lease.fence).toBeGreaterThan(held.fence)
      await lease.release()
      expect(latency, `acquired ${Math.round(latency)} ms after the release`).toBeLessThan(ttl)
    })

    it('2. a grant whose reply came too late is released at once, not left to expire', async () => {
      // driftFactor 0.3: validity budget 698 ms of a 1,000 ms ttl. A reply after 800 ms is too
      // late for the client, but the lock still has 200 ms to live in Redis: it must be released.
      await setup('late-release', { driftFactor: 0.3 })
      const expiredBefore = await expiredKeys(server.redis)
      proxy.setDelay(800, { direction: 'down' })
      await expect(locks.tryAcquire('late', { ttl: 1_000 })).rejects.toBeInstanceOf(RedisError)
      await until('the lock is free', async () => !(await direct.inspect('late')).held, { timeout: 3_000 })
      expect(await expiredKeys(server.redis), 'the lock expired instead of being released').toBe(expiredBefore)
    })

    it('8. release reply lost, then retried: the release ran once; neither the resent command, a second release() nor a raw EVALSHA with the old token touches the next holder', async () => {
      await setup('lost-release')
      const resource = 'lost-release'
      const k = keysOf(prefix, resource)
      const old = await locks.acquire(resource, { ttl: 5_000 })
      proxy.drop({ direction: 'down' })
      const releasing = outcome(old.release(), 4_000)
      await until('the release ran in Redis', async () => !(await direct.inspect(resource)).held, { timeout: 2_000 })
      const next = await direct.acquire(resource, { ttl: 5_000, wait: 0 })
      expect(next.fence).toBeGreaterThan(old.fence)
      // The connection dies with the reply still owed: ioredis resends the release on the new
      // connection, node-redis fails it.
      const first = await settledAfterReset(releasing)
      // Never `true`: that would mean the resent release deleted the next holder's lock.
      if (t.adapter.name === 'ioredis')
        expect(first).toEqual({ value: false }) // resent, found the next token: refused
      else expect((first as { error?: unknown }).error).toBeInstanceOf(RedisError)
      expect(await outcome(old.release(), 3_000)).toEqual({ value: false })
      const raw = await t.client.command('EVALSHA', scripts.mutexRelease.sha, 3, k.lock, k.queue, k.queueExpiry, old.token, k.channel)
      expect(Number(raw)).toBe(0)
      const info = await direct.inspect(resource)
      expect(info.held).toBe(true)
      expect(info.token).toBe(next.token)
      expect(next.signal.aborted).toBe(false)
      expect(await next.release()).toBe(true)
    })

    it("8. extend reply lost, then retried: never extends the next holder's lock; the old lease learns it lost", async () => {
      await setup('lost-extend')
      const resource = 'lost-extend'
      const k = keysOf(prefix, resource)
      const old = await locks.acquire(resource, { ttl: 600 })
      proxy.drop({ direction: 'down' })
      const extending = outcome(old.extend(600), 5_000)
      // The extension ran; the lock then expires 600 ms later and the next holder takes it.
      const next = await direct.acquire(resource, { ttl: 3_000, wait: 3_000 })
      expect(next.fence).toBeGreaterThan(old.fence)
      const first = await settledAfterReset(extending)
      expect((first as { error?: unknown }).error, `extend resolved: ${JSON.stringify(first)}`).toBeInstanceOf(Error)
      expect(['RedisError', 'LockLostError']).toContain((first as { error: Error }).error.name)
      // Its deadline passed while the reply was missing.
      expect(old.signal.aborted).toBe(true)
      const again = await outcome(old.extend(60_000), 3_000)
      expect((again as { error?: unknown }).error).toBeInstanceOf(LockLostError)
      const raw = await t.client.command('EVALSHA', scripts.mutexExtend.sha, 1, k.lock, old.token, 60_000)
      expect(Number(raw)).toBe(0)
      const info = await direct.inspect(resource)
      expect(info.token).toBe(next.token)
      expect(info.ttl).toBeLessThanOrEqual(3_000)
      expect(await next.release()).toBe(true)
    })

    it('acquire reply lost (connection reset while the reply was owed): the waiter is not blocked for a whole ttl by the lock its own lost attempt took', async () => {
      await setup('lost-acquire')
      const resource = 'lost-acquire'
      const ttl = 4_000
      proxy.drop({ direction: 'down' })
      const acquiring = locks.acquire(resource, { ttl, wait: 10_000 })
      acquiring.catch(() => {})
      // The attempt ran: Redis now holds the lock under a token whose grant the client never saw.
      await until('the lost attempt took the lock', async () => (await direct.inspect(resource)).held, { timeout: 2_000 })
      proxy.heal()
      proxy.resetAll()
      const resetAt = performance.now()
      const lease = await acquiring
      const latency = performance.now() - resetAt
      const info = await direct.inspect(resource)
      expect(info.token).toBe(lease.token)
      await lease.release()
      // ioredis resends the attempt (same token) and Redis answers "held, retry in ~ttl";
      // node-redis fails it and the next attempt (new token) finds the orphan. Either way the
      // lock this waiter itself took must not keep it (and everyone queued behind) waiting a ttl.
      expect(latency, `acquired ${Math.round(latency)} ms after the reset (ttl ${ttl})`).toBeLessThan(1_500)
    })

    it('8. release reply lost on an auto-extended lease: no renewal after the release, the next holder keeps its ttl', async () => {
      await setup('lost-release-auto')
      const resource = 'lost-release-auto'
      const old: Lease = await locks.acquire(resource, { ttl: 300, autoExtend: true })
      proxy.drop({ direction: 'down' })
      const releasing = outcome(old.release(), 3_000)
      await until('the release ran in Redis', async () => !(await direct.inspect(resource)).held, { timeout: 2_000 })
      const next = await direct.acquire(resource, { ttl: 2_000, wait: 0 })
      await settledAfterReset(releasing)
      await new Promise((resolve) => setTimeout(resolve, 400)) // more than one renewal period of the old lease
      const info = await direct.inspect(resource)
      expect(info.token).toBe(next.token)
      expect(info.ttl).toBeLessThanOrEqual(2_000 - 300)
      expect(await next.release()).toBe(true)
    })
  })
})

async function expiredKeys(redis: RedisProcess): Promise<number> {
  const stats = await redis.cli('INFO', 'stats')
  return Number(/expired_keys:(\d+)/.exec(stats)?.[1])
}
