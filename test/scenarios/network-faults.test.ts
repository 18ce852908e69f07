// Failure scenarios on the wire between one client and one Redis (DESIGN.md 2 and 8), through
// the in-process fault proxy: replies delayed past the ttl, replies lost and the command retried.
import { afterEach, beforeEach, expect, it } from 'vitest'
import { createLocks, LockLostError, RedisError, type Lease, type Locks } from '../../src/index.js'
import { scripts } from '../../src/lua/index.js'
import type { TestClient } from '../../harness/clients.js'
import type { RedisProcess } from '../../harness/redis-server.js'
import { closeQuietly, keysOf, pttl, sleep, uniquePrefix, untilFree, until } from '../../harness/util.js'
import { describeRedis, perAdapter, useFaultProxy } from '../../harness/per-adapter.js'
import { record, recordAcquires } from '../../harness/telemetry.js'
import { scriptCalls } from '../../harness/commandstats.js'

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
    let acquires: ReturnType<typeof recordAcquires>
    let extends_: ReturnType<typeof record<'fencelock:extend'>>
    beforeEach(() => {
      acquires = recordAcquires()
      extends_ = record('fencelock:extend')
    })
    afterEach(async () => {
      acquires.stop()
      extends_.stop()
      proxy.heal()
      await closeQuietly([locks, direct])
      await faulty?.disconnect()
    })

    it('2. acquire reply delayed past the ttl: tryAcquire throws RedisError within the ttl, and the lock does not stay held', async () => {
      await setup('late-try')
      const ttl = 400
      proxy.setDelay(ttl + 300, { direction: 'down' })
      const err = await locks.tryAcquire('late', { ttl }).then(
        () => 'acquired',
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(RedisError)
      // Given up when the validity (ttl minus drift) ran out with no reply, within the ttl: not
      // when the late reply came (that one would say it "arrived after its validity").
      const [, gaveUpAfter] = /^No reply from Redis within (\d+) ms/.exec((err as Error).message) ?? []
      expect(Number(gaveUpAfter), (err as Error).message).toBeLessThanOrEqual(ttl)
      await until('the lock is free', async () => !(await direct.inspect('late')).held, { timeout: 2_000 })
      expect(await pttl(t.client, keysOf(prefix, 'late').lock)).toBe(-2)
    })

    it('2. acquire reply delayed past the ttl: acquire rejects with RedisError at its deadline, never with a stale lease; nothing is left held or queued', async () => {
      await setup('late-acquire')
      const ttl = 400
      const wait = 1_500
      proxy.setDelay(ttl + 300, { direction: 'down' })
      const result = await outcome(locks.acquire('late', { ttl, wait }), wait + 2_000)
      expect(result).not.toBe('pending')
      const error = (result as { error?: unknown }).error
      expect(error, `acquire resolved: ${JSON.stringify(result)}`).toBeInstanceOf(RedisError)
      // Ended by its wait deadline (outcome() above bounds it), naming the Redis failure that kept
      // it from the lock: each attempt gave up at its validity with no reply, never took a late grant.
      expect((error as Error).message).toMatch(/No reply from Redis within \d+ ms/)
      expect(acquires.of('late').map((e) => e.outcome)).toEqual(['error'])
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
      // 6 s: the partition (600 ms) is a tenth of it, so a loaded machine's stalls (seconds in CI
      // beside the suite) are not mistaken for the partition's doing.
      const ttl = 6_000
      const lease = await locks.acquire(resource, { ttl, autoExtend: true })
      proxy.partition()
      await sleep(600) // the partition lasts a while (time must pass), well short of the validity
      proxy.heal()
      // The renewal after the partition has gone through (the first one is due a third of the ttl
      // in). Should the lease be lost instead, that is the failure, with its reason and the
      // extensions seen; by the ttl's end it would be lost, so the ttl bounds the wait.
      const seen = () => `extensions seen: ${JSON.stringify(extends_.events.map((e) => e.outcome))}`
      await until(
        'a renewal went through after the heal',
        () => {
          if (lease.signal.aborted) throw new Error('the lease was lost', { cause: lease.signal.reason })
          return extends_.events.some((e) => e.token === lease.token && e.outcome === 'extended')
        },
        { timeout: ttl },
      ).catch((err: Error) => {
        throw new Error(`${err.message}; ${seen()}`, { cause: err.cause })
      })
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
      await server.redis.cli('CONFIG', 'RESETSTAT')
      const waiting = locks.acquire(resource, { ttl, wait: 15_000 })
      waiting.catch(() => {})
      const k = keysOf(prefix, resource)
      const channels = async () => ((await t.client.command('PUBSUB', 'CHANNELS', `${k.channel}:*`)) as string[]).length
      await until('the waiter queued and subscribed', async () => Number(await t.client.command('ZCARD', k.queue)) === 1 && (await channels()) === 1)
      // Its first look and the one once subscribed have run (plain commands above, no scripts): it
      // sleeps until the release's message or its re-check.
      await until('the look after subscribing ran', async () => (await scriptCalls(server.redis)) >= 2)
      proxy.partition()
      await until("Redis dropped the waiter's subscription: the release's message reaches no one", async () => (await channels()) === 0)
      expect(await held.release()).toBe(true)
      proxy.heal()
      const lease = await waiting
      expect(lease.fence).toBeGreaterThan(held.fence)
      await lease.release()
      // Within one ttl of the release: the reconnect after the heal looked again at once, not the
      // re-check timer (the holder's remaining ttl, ~5 s).
      const [event] = acquires.of(resource).filter((e) => e.token === lease.token)
      expect(event?.wakes).toContain('resync')
      expect(event?.wakes).not.toContain('recheck')
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
      const lease = await acquiring
      const info = await direct.inspect(resource)
      expect(info.token).toBe(lease.token)
      await lease.release()
      // ioredis resends the attempt (same token) and Redis answers "held, retry in ~ttl";
      // node-redis fails it and the next attempt (new token) finds the orphan. Either way the
      // lock this waiter itself took must not keep it (and everyone queued behind) waiting a ttl:
      // no attempt of it went out on the re-check timer.
      const [event] = acquires.of(resource).filter((e) => e.token === lease.token)
      expect(event?.wakes, JSON.stringify(event)).not.toContain('recheck')
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
      await sleep(400) // more than one renewal period of the old lease (time must pass: nothing may happen meanwhile)
      const info = await direct.inspect(resource)
      expect(info.token).toBe(next.token)
      expect(info.ttl).toBeLessThanOrEqual(2_000 - 300)
      expect(extends_.events.filter((e) => e.token === old.token)).toEqual([]) // not one renewal of the old lease went out
      expect(await next.release()).toBe(true)
    })
  })
})

async function expiredKeys(redis: RedisProcess): Promise<number> {
  const stats = await redis.cli('INFO', 'stats')
  return Number(/expired_keys:(\d+)/.exec(stats)?.[1])
}
