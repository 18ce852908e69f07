// The public API, run once per client adapter against a real redis-server.
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  claimFence,
  ClosedError,
  createLocks,
  fencedSet,
  FencelockError,
  InvalidArgumentError,
  LockAbortedError,
  LockLostError,
  LockTimeoutError,
  type Lease,
  type Locks,
  type RedisClient,
} from '../../src/index.js'
import { scripts } from '../../src/lua/index.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { record, recordAcquires } from '../../harness/telemetry.js'
import { sleep, until } from '../../harness/util.js'

interface Adapter {
  name: string
  connect(url: string): Promise<{ client: RedisClient; quit(): Promise<void> }>
}

const adapters: Adapter[] = [
  {
    name: 'ioredis',
    connect: async (url) => {
      const client = new Redis(url)
      await client.ping()
      return { client, quit: async () => void (await client.quit()) }
    },
  },
  {
    name: 'node-redis',
    connect: async (url) => {
      const client = createClient({ url })
      client.on('error', () => {})
      await client.connect()
      return { client, quit: async () => void (await client.quit()) }
    },
  },
]

let unique = 0
const name = (base: string) => `${base}-${++unique}`

/** Why the acquires of `resource` went out again after waiting, without the first wait's `subscribed` look. */
/**
 * Woken by an event, not by the re-check at the holder's ttl: by the release's message, or by the
 * look a first wait takes once its channel is subscribed, when the release came while that look
 * was in flight (in line and listening does not mean that look has returned).
 */
function expectWokenByEvent(acquires: ReturnType<typeof recordAcquires>, resource: string): void {
  const wakes = acquires.wakes(resource)
  expect(wakes, resource).not.toContain('recheck')
  expect(['release', 'subscribed'], `${resource}: ${wakes.join(', ')}`).toContain(wakes.at(-1))
  expect(
    wakes.filter((w) => w !== 'subscribed' && w !== 'release'),
    resource,
  ).toEqual([])
}

describe.skipIf(!requireRedisOrSkip()).each(adapters)('API with $name', (adapter) => {
  let server: RedisProcess
  let conn: Awaited<ReturnType<Adapter['connect']>>
  let locks: Locks
  const acquires = recordAcquires()
  const extends_ = record('fencelock:extend')
  /** Until `lease` was extended `count` times (automatic or not); rejects at once if it is lost meanwhile. */
  const untilExtended = (lease: Lease, count: number) =>
    until(`the lease was extended ${count} times`, () => {
      if (lease.signal.aborted) throw lease.signal.reason
      return extends_.events.filter((e) => e.token === lease.token && e.outcome === 'extended').length >= count
    })
  /**
   * Until `count` waiters of `resource` are in its queue in Redis and its wake-up channel has a
   * subscriber: a release from then on is heard (before, the waiter's first look may find it free).
   */
  const untilWaiters = (resource: string, count: number, on: Pick<Locks, 'inspect'> = locks) =>
    until(`${count} waiter(s) of ${resource} are in line and listening`, async () => {
      if ((await on.inspect(resource)).waiters !== count) return false
      return (await server.cli('PUBSUB', 'CHANNELS', `*{${resource}}:W*`)).trim() !== ''
    })

  beforeAll(async () => {
    server = await startRedis()
    conn = await adapter.connect(server.url)
    locks = createLocks({ redis: conn.client, ttl: 5_000, wait: 5_000 })
  })
  afterAll(async () => {
    acquires.stop()
    extends_.stop()
    await locks?.close()
    await conn?.quit()
    await server?.stop()
  })

  it('acquires, reports, and releases a lock', async () => {
    const resource = name('acct')
    const lease = await locks.acquire(resource, { ttl: 3_000 })
    expect(lease.resource).toBe(resource)
    expect(lease.token).toMatch(/^[0-9a-f-]{36}$/)
    expect(Number.isSafeInteger(lease.fence)).toBe(true)
    expect(lease.held).toBe(true)
    expect(lease.remaining).toBeGreaterThan(2_800)
    expect(lease.remaining).toBeLessThanOrEqual(3_000)
    expect(lease.signal.aborted).toBe(false)
    const info = await locks.inspect(resource)
    expect(info).toMatchObject({ resource, held: true, token: lease.token, fence: lease.fence, waiters: 0 })
    expect(info.ttl).toBeGreaterThan(2_500)
    expect(await lease.release()).toBe(true)
    expect(await lease.release()).toBe(false)
    expect(await locks.inspect(resource)).toMatchObject({ held: false, token: null, ttl: null, fence: lease.fence })
  })

  it('hands out strictly increasing fences', async () => {
    const resource = name('fence')
    let last = 0
    for (let i = 0; i < 50; i++) {
      const lease = await locks.acquire(resource)
      expect(lease.fence).toBeGreaterThan(last)
      last = lease.fence
      await lease.release()
    }
  })

  it('keeps working after the script cache is flushed (EVALSHA falls back to EVAL on NOSCRIPT)', async () => {
    const resource = name('noscript')
    const warm = await locks.acquire(resource)
    await warm.release()
    await server.cli('SCRIPT', 'FLUSH')
    const lease = await locks.acquire(resource)
    expect(lease.fence).toBeGreaterThan(warm.fence)
    await server.cli('SCRIPT', 'FLUSH')
    expect(await lease.release()).toBe(true)
    expect(await server.cli('SCRIPT', 'EXISTS', '0123456789012345678901234567890123456789')).toBe('0')
  })

  it('tryAcquire never waits: null while held, a lease when free', async () => {
    const resource = name('try')
    const lease = await locks.acquire(resource)
    expect(await locks.tryAcquire(resource)).toBeNull()
    await lease.release()
    const second = await locks.tryAcquire(resource)
    expect(second?.fence).toBeGreaterThan(lease.fence)
    await second?.release()
  })

  it('wakes a waiter on release instead of waiting out the ttl', async () => {
    const resource = name('wake')
    const holder = await locks.acquire(resource, { ttl: 20_000 })
    const waiting = locks.acquire(resource, { wait: 15_000 })
    await untilWaiters(resource, 1)
    await holder.release()
    const next = await waiting
    // Woken by the release message, not by the re-check that the holder's 20 s ttl bounds.
    expectWokenByEvent(acquires, resource)
    expect(next.fence).toBeGreaterThan(holder.fence)
    await next.release()
  })

  it('serves waiters of one process in FIFO order', async () => {
    const resource = name('fifo')
    const holder = await locks.acquire(resource)
    const order: number[] = []
    // Called in this order; the first one takes the process's place in the Redis queue, the
    // others line up behind it in the process.
    const waiters = [0, 1, 2, 3, 4].map(async (i) => {
      const lease = await locks.acquire(resource)
      order.push(i)
      await lease.release()
    })
    await untilWaiters(resource, 1)
    await holder.release()
    await Promise.all(waiters)
    expect(order).toEqual([0, 1, 2, 3, 4])
    // Each went on when the one before it was done (a release or its turn), never by the holder's 5 s re-check.
    expect(acquires.of(resource).filter((e) => e.outcome === 'acquired')).toHaveLength(6)
    expect(acquires.wakes(resource)).not.toContain('recheck')
  })

  it('skips a dead waiter at the head of the queue within the grace, not a whole ttl', async () => {
    const resource = name('ghost')
    const holder = await locks.acquire(resource, { ttl: 10_000 })
    // A waiter that queued and died (killed -9): its place in line is there, nobody serves it.
    const keys = [`fencelock:{${resource}}:L`, `fencelock:{${resource}}:F`, `fencelock:{${resource}}:Q`, `fencelock:{${resource}}:X`]
    await server.cli('EVAL', scripts.mutexAcquire.source, '4', ...keys, 'ghost-token', '10000', '60000', 'ghost:1', '2000', '', '')
    const waiting = locks.acquire(resource, { ttl: 10_000, wait: 15_000 })
    await untilWaiters(resource, 2)
    await holder.release()
    const next = await waiting
    // The release named the ghost as next and this waiter as its standby, which looked again once
    // the ghost's grace was over. Before: the ghost kept its place for the holder's remaining ttl
    // plus the grace (~12 s), and only the re-check timer went on.
    expect(acquires.wakes(resource).filter((w) => w !== 'subscribed')).toEqual(['standby'])
    await next.release()
  })

  it('times out with a typed error naming the resource and the time waited', async () => {
    const resource = name('timeout')
    const holder = await locks.acquire(resource)
    const err = await locks.acquire(resource, { wait: 200 }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(LockTimeoutError)
    expect(err).toBeInstanceOf(FencelockError)
    const timeout = err as LockTimeoutError
    expect(timeout.code).toBe('LOCK_TIMEOUT')
    expect(timeout.resource).toBe(resource)
    // promise 3: the wait deadline is kept, so it did not give up early (a lower bound; 5 ms for timer rounding).
    expect(timeout.waited).toBeGreaterThanOrEqual(195)
    expect(timeout.message).toContain(resource)
    // It left the queue: nobody is counted as waiting.
    expect((await locks.inspect(resource)).waiters).toBe(0)
    await holder.release()
  })

  it('wait: 0 makes one attempt', async () => {
    const resource = name('zero')
    const holder = await locks.acquire(resource)
    await expect(locks.acquire(resource, { wait: 0 })).rejects.toBeInstanceOf(LockTimeoutError)
    await holder.release()
  })

  it('honours an AbortSignal while waiting, and one aborted before the call', async () => {
    const resource = name('abort')
    const holder = await locks.acquire(resource)
    const controller = new AbortController()
    const waiting = locks.acquire(resource, { signal: controller.signal })
    await untilWaiters(resource, 1)
    controller.abort(new Error('user gave up'))
    const err = await waiting.catch((e: unknown) => e)
    expect(err).toBeInstanceOf(LockAbortedError)
    expect((err as LockAbortedError).cause).toEqual(new Error('user gave up'))
    await expect(locks.acquire(resource, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(LockAbortedError)
    await holder.release()
    // The aborted waiter neither holds nor blocks the lock.
    const after = await locks.acquire(resource, { wait: 1_000 })
    await after.release()
  })

  it('aborts the lease signal when the ttl runs out without extension', async () => {
    const resource = name('expire')
    const lease = await locks.acquire(resource, { ttl: 150 })
    const reason = await new Promise<unknown>((resolve) => lease.signal.addEventListener('abort', () => resolve(lease.signal.reason)))
    expect(reason).toBeInstanceOf(LockLostError)
    expect((reason as LockLostError).reason).toBe('expired')
    expect(lease.held).toBe(false)
    expect(await lease.release()).toBe(false)
  })

  it('extends a lease, and reports a refused extension as lost', async () => {
    const resource = name('extend')
    const lease = await locks.acquire(resource, { ttl: 1_000 })
    await lease.extend(5_000)
    expect(lease.remaining).toBeGreaterThan(4_000)
    expect((await locks.inspect(resource)).ttl).toBeGreaterThan(4_000)
    // Someone deletes the key behind the holder's back (eviction, operator, clock jump).
    await server.cli('DEL', `fencelock:{${resource}}:L`)
    const err = await lease.extend().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(LockLostError)
    expect((err as LockLostError).reason).toBe('refused')
    expect(lease.signal.aborted).toBe(true)
    expect(await lease.release()).toBe(false)
  })

  it('a release that finds the lock gone aborts the signal: the lease was lost before it', async () => {
    const resource = name('gone')
    const lease = await locks.acquire(resource, { ttl: 5_000 })
    // Redis lost it (restart with no data, eviction); another client takes it.
    await server.cli('DEL', `fencelock:{${resource}}:L`)
    const other = await locks.acquire(resource, { wait: 0 })
    expect(await lease.release()).toBe(false)
    expect(lease.signal.aborted).toBe(true)
    expect((lease.signal.reason as LockLostError).reason).toBe('refused')
    // The other holder was not touched.
    expect((await locks.inspect(resource)).token).toBe(other.token)
    expect(await other.release()).toBe(true)
    expect(other.signal.aborted).toBe(false)
  })

  it('auto-extends a lease past its ttl until released', async () => {
    const resource = name('auto')
    const lease = await locks.acquire(resource, { ttl: 600, autoExtend: true })
    // Renewals go out a third of the ttl apart: four of them take it past its first 600 ms.
    await untilExtended(lease, 4)
    expect(lease.signal.aborted).toBe(false)
    expect(lease.held).toBe(true)
    expect((await locks.inspect(resource)).token).toBe(lease.token)
    expect(await lease.release()).toBe(true)
    expect((await locks.inspect(resource)).held).toBe(false)
  })

  it('withLock returns the result, keeps the lease extended, and releases', async () => {
    const resource = name('with')
    const result = await locks.withLock(
      resource,
      async (lease) => {
        // Renewals go out a third of the ttl apart: four of them take it past its first 600 ms.
        await untilExtended(lease, 4)
        expect(lease.signal.aborted).toBe(false)
        return lease.fence
      },
      { ttl: 600 },
    )
    expect(typeof result).toBe('number')
    expect((await locks.inspect(resource)).held).toBe(false)
  })

  it('withLock rethrows the error of fn, never a release error, and releases', async () => {
    const resource = name('with-error')
    const boom = new Error('boom')
    await expect(
      locks.withLock(resource, async () => {
        // Make the release fail to find the lock: it must not mask boom.
        await server.cli('DEL', `fencelock:{${resource}}:L`)
        throw boom
      }),
    ).rejects.toBe(boom)
    expect((await locks.inspect(resource)).held).toBe(false)
  })

  it('await using releases at the end of the block', async () => {
    const resource = name('using')
    {
      await using lease = await locks.acquire(resource)
      expect(lease.held).toBe(true)
    }
    expect((await locks.inspect(resource)).held).toBe(false)
  })

  it('keeps resources with braces, spaces, newlines and Unicode apart', async () => {
    const names = ['a}b', 'a', '{a}', 'a b', 'a\nb', 'ключ🔒', 'a}:L', 'x:{y}']
    const leases = await Promise.all(names.map((n) => locks.acquire(n, { wait: 0 })))
    for (const [i, n] of names.entries()) expect((await locks.inspect(n)).token).toBe(leases[i]!.token)
    await Promise.all(leases.map((l) => l.release()))
  })

  it('releases and extends by token from another instance, and only with the holder token', async () => {
    const resource = name('by-token')
    // The lease lives in one instance; another one (as in another process) knows only its token.
    const other = createLocks({ redis: conn.client, ttl: 5_000, wait: 5_000 })
    try {
      const lease = await locks.acquire(resource, { ttl: 3_000 })
      expect(await other.extend(resource, 'not-the-token', 5_000)).toBe(false)
      expect(await other.release(resource, 'not-the-token')).toBe(false)
      expect(await other.extend(resource, lease.token, 5_000)).toBe(true)
      const info = await locks.inspect(resource)
      expect(info.token).toBe(lease.token)
      expect(info.ttl).toBeGreaterThan(4_000)
      // A waiter is woken by a release by token just as by lease.release().
      const waiting = locks.acquire(resource, { wait: 4_000 })
      await untilWaiters(resource, 1)
      expect(await other.release(resource, lease.token)).toBe(true)
      const next = await waiting
      expectWokenByEvent(acquires, resource)
      expect(next.fence).toBeGreaterThan(lease.fence)
      // The old token no longer holds it: neither call touches the new holder's lock.
      expect(await other.release(resource, lease.token)).toBe(false)
      expect(await other.extend(resource, lease.token)).toBe(false)
      expect((await locks.inspect(resource)).token).toBe(next.token)
      // The same instance's lease, released by token, is settled as a lease: a later
      // lease.release() reports false, its signal does not abort.
      expect(await locks.release(resource, next.token)).toBe(true)
      expect(await next.release()).toBe(false)
      expect(next.signal.aborted).toBe(false)
      expect((await locks.inspect(resource)).held).toBe(false)
    } finally {
      await other.close()
    }
  })

  it('extend by token on a lease of the same instance moves its deadline', async () => {
    const resource = name('by-token-local')
    const lease = await locks.acquire(resource, { ttl: 600 })
    const before = lease.deadline
    expect(await locks.extend(resource, lease.token, 4_000)).toBe(true)
    expect(lease.deadline).toBeGreaterThan(before + 2_000)
    // Time must pass: the lease's first deadline (600 ms) goes by, and its expiry alarm must have moved.
    await sleep(800)
    expect(lease.signal.aborted).toBe(false)
    expect(await lease.release()).toBe(true)
    expect(await locks.extend(resource, lease.token)).toBe(false)
  })

  it('rejects bad input before any Redis call, naming the value', async () => {
    const cases: [() => Promise<unknown>, RegExp][] = [
      [() => locks.acquire('r', { ttl: 0 }), /ttl.*got 0/],
      [() => locks.acquire('r', { ttl: -5 }), /ttl.*got -5/],
      [() => locks.acquire('r', { ttl: Number.NaN }), /ttl.*got NaN/],
      [() => locks.acquire('r', { ttl: 1.5 }), /ttl.*got 1\.5/],
      [() => locks.acquire('r', { ttl: 1e12 }), /ttl.*got 1000000000000/],
      [() => locks.acquire('', {}), /resource.*got ""/],
      [() => locks.acquire(42 as unknown as string), /resource.*got 42/],
      [() => locks.acquire('x'.repeat(2_000)), /resource.*at most 1024/],
      [() => locks.acquire('r', { wait: -1 }), /wait.*got -1/],
      [() => locks.acquire('r', { signal: {} as AbortSignal }), /signal/],
      [() => locks.tryAcquire('r', { ttl: Number.POSITIVE_INFINITY }), /ttl.*got Infinity/],
      [() => locks.withLock('r', 'nope' as unknown as () => void), /fn.*got "nope"/],
      [() => locks.release('r', ''), /token.*got ""/],
      [() => locks.release('', 'token'), /resource.*got ""/],
      [() => locks.release('r', undefined as unknown as string), /token.*got undefined/],
      [() => locks.extend('r', 't'.repeat(300)), /token.*at most 256/],
      [() => locks.extend('r', 'token', 0), /ttl.*got 0/],
      [() => locks.extend('r', 'token', Number.NaN), /ttl.*got NaN/],
      [() => fencedSet(conn.client, 'k', 'v', -1), /fence.*got -1/],
      [() => fencedSet(conn.client, 'k', 'v', 2 ** 60), /fence.*got/],
    ]
    for (const [call, message] of cases) {
      const err = await call().catch((e: unknown) => e)
      expect(err, String(message)).toBeInstanceOf(InvalidArgumentError)
      expect((err as Error).message).toMatch(message)
      expect((err as InvalidArgumentError).code).toBe('INVALID_ARGUMENT')
    }
    // @ts-expect-error: no client (a JavaScript caller gets the error)
    expect(() => createLocks({ redis: undefined })).toThrow(InvalidArgumentError)
    // @ts-expect-error: not a client
    expect(() => createLocks({ redis: { foo: 1 } })).toThrow(/ioredis.*node-redis/)
    expect(() => createLocks({ redis: conn.client, ttl: 0 })).toThrow(/ttl.*got 0/)
    expect(() => createLocks({ redis: conn.client, driftFactor: Number.NaN })).toThrow(/driftFactor.*got NaN/)
    const lease = await locks.acquire(name('bad-extend'))
    await expect(lease.extend(0)).rejects.toThrow(/ttl.*got 0/)
    await lease.release()
  })

  it('fencedSet refuses stale fences', async () => {
    const a = await locks.acquire(name('fenced'))
    const b = await locks.acquire(name('fenced-2'))
    const [older, newer] = a.fence < b.fence ? [a, b] : [b, a]
    expect(await fencedSet(conn.client, 'balance', '100', newer.fence)).toBe(true)
    expect(await fencedSet(conn.client, 'balance', '50', older.fence)).toBe(false)
    expect(await fencedSet(conn.client, 'balance', '90', newer.fence)).toBe(true)
    await a.release()
    await b.release()
  })

  it('claimFence before reading: a stale holder that read before a newer claim cannot write', async () => {
    const older = await locks.acquire(name('claim-a'))
    const newer = await locks.acquire(name('claim-b'))
    const [a, b] = older.fence < newer.fence ? [older, newer] : [newer, older]
    const key = name('wallet')
    await fencedSet(conn.client, key, '300', 0)
    // a claims and reads 300, then pauses; b claims and reads 300 too.
    expect(await claimFence(conn.client, key, a.fence)).toBe(true)
    const readA = 300
    expect(await claimFence(conn.client, key, b.fence)).toBe(true)
    const readB = 300
    // a wakes up and writes first: refused (with fencedSet alone it would pass, and b's write after
    // it would lose a's update without anyone noticing).
    expect(await fencedSet(conn.client, key, String(readA - 10), a.fence)).toBe(false)
    expect(await fencedSet(conn.client, key, String(readB - 10), b.fence)).toBe(true)
    expect(await claimFence(conn.client, key, a.fence)).toBe(false)
    await expect(claimFence(conn.client, key, -1)).rejects.toBeInstanceOf(InvalidArgumentError)
    await older.release()
    await newer.release()
  })

  it('close() rejects waiters, ends lease timers, and refuses new calls', async () => {
    const own = createLocks({ redis: conn.client })
    const resource = name('close')
    const holder = await own.acquire(resource, { autoExtend: true })
    const waiting = own.acquire(resource, { wait: 10_000 })
    await untilWaiters(resource, 1, own)
    await own.close()
    expect(own.closed).toBe(true)
    const err = await waiting.catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ClosedError)
    expect((err as ClosedError).code).toBe('LOCKS_CLOSED')
    expect(holder.signal.aborted).toBe(true)
    expect((holder.signal.reason as LockLostError).reason).toBe('closed')
    await expect(own.acquire(resource)).rejects.toBeInstanceOf(ClosedError)
    // The lease counts as lost, but releasing it still deletes the lock it held, and says so.
    expect(await holder.release()).toBe(true)
    await expect(own.inspect(resource)).rejects.toBeInstanceOf(ClosedError)
    await expect(own.release(resource, 'some-token')).rejects.toBeInstanceOf(ClosedError)
    await expect(own.extend(resource, 'some-token')).rejects.toBeInstanceOf(ClosedError)
    expect((await locks.inspect(resource)).held).toBe(false)
  })
})

describe.skipIf(!requireRedisOrSkip())('closed clients', () => {
  it.each(adapters)('$name: a closed client gets a typed error, not a hang', async (adapter) => {
    const server = await startRedis()
    try {
      const conn = await adapter.connect(server.url)
      const locks = createLocks({ redis: conn.client })
      await conn.quit()
      const err = await locks.acquire('r').catch((e: unknown) => e)
      expect(err).toBeInstanceOf(ClosedError)
      expect((err as ClosedError).code).toBe('CLIENT_CLOSED')
      await locks.close()
    } finally {
      await server.stop()
    }
  })
})

describe.skipIf(!requireRedisOrSkip())('the shared pub/sub connection', () => {
  it('ioredis with lazyConnect: channels subscribed while the connection opens are all heard', async () => {
    const server = await startRedis()
    const holderClient = new Redis(server.url)
    const waiterClient = new Redis(server.url, { lazyConnect: true })
    const acquires = recordAcquires()
    try {
      const holders = createLocks({ redis: holderClient })
      const waiters = createLocks({ redis: waiterClient })
      const resources = Array.from({ length: 12 }, (_, i) => `res-${i}`)
      const held = await Promise.all(resources.map((r) => holders.acquire(r, { ttl: 10_000 })))
      // Waits that start a fraction of a millisecond apart: their SUBSCRIBEs go out while the new
      // pub/sub connection opens, some of them during ioredis' INFO ready check.
      const waiting: Promise<Lease>[] = []
      for (const r of resources) {
        waiting.push(waiters.acquire(r, { wait: 15_000 }))
        await new Promise((resolve) => setImmediate(resolve))
      }
      // Every waiter is in line and listens on its channel (a lost SUBSCRIBE never shows up here).
      await until('every waiter is in line and subscribed', async () => {
        const info = await Promise.all(resources.map((r) => waiters.inspect(r)))
        const channels = String(await server.cli('PUBSUB', 'CHANNELS', '*res-*'))
        return info.every((i) => i.waiters === 1) && resources.every((r) => channels.includes(`{${r}}`))
      })
      await Promise.all(held.map((lease) => lease.release()))
      const leases = await Promise.all(waiting)
      // Woken by the releases, not by the 10 s re-check timer of a channel that was lost.
      for (const r of resources) expectWokenByEvent(acquires, r)
      await Promise.all(leases.map((lease) => lease.release()))
      await holders.close()
      await waiters.close()
    } finally {
      acquires.stop()
      holderClient.disconnect()
      waiterClient.disconnect()
      await server.stop()
    }
  })
})

describe.skipIf(!requireRedisOrSkip())('the pub/sub connection and the user client options', () => {
  it('ioredis with commandTimeout: a slow resubscribe after a reconnect does not crash the process', async () => {
    const server = await startRedis()
    const holderClient = new Redis(server.url)
    const waiterClient = new Redis(server.url, { commandTimeout: 50 })
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => void unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    try {
      const holders = createLocks({ redis: holderClient })
      const waiters = createLocks({ redis: waiterClient })
      const held = await holders.acquire('slow-resub', { ttl: 3_000 })
      const waiting = waiters.acquire('slow-resub', { wait: 10_000 })
      const subscribed = async () => String(await server.cli('PUBSUB', 'CHANNELS', '*slow-resub*')).includes('{slow-resub}')
      await until('the waiter is in line and subscribed', async () => (await holders.inspect('slow-resub')).waiters === 1 && (await subscribed()))
      // Drop the pub/sub connection and keep Redis busy while ioredis reconnects and resubscribes.
      await holderClient.call('CLIENT', 'KILL', 'TYPE', 'pubsub')
      server.pause()
      // Time must pass: a pause several times the 50 ms commandTimeout, so the reconnect's commands time out.
      await sleep(300)
      server.resume()
      await until('the waiter resubscribed', subscribed)
      await held.release()
      const lease = await waiting
      await lease.release()
      // An unhandled rejection is reported once the microtasks of its turn have run: one more turn.
      await new Promise((resolve) => setImmediate(resolve))
      expect(unhandled).toEqual([])
      await holders.close()
      await waiters.close()
    } finally {
      process.off('unhandledRejection', onUnhandled)
      holderClient.disconnect()
      waiterClient.disconnect()
      await server.stop()
    }
  })
})
