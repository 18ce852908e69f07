// A lost lease's `reason` says what happened (issue 18, item 4): no reply from Redis before the
// deadline is 'unreachable', a refusal is 'refused', a deadline that passed while Redis answered
// (or was never asked in time) is 'expired'. With the clients at their DEFAULT options: ioredis
// queues a renewal (offline queue, no command timeout) instead of failing it, node-redis too.
// Also: extend() after the lease's own release() (item 7a), and the client's own reason for a
// "no reply" (item 7b).
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { createLocks, fencedSet, LockLostError, RedisError, type Lease, type Locks, type RedisClient } from '../../src/index.js'
import { startFaultProxy, type FaultProxy } from '../../harness/fault-proxy.js'
import { freePort, listenersOn, mature, requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { closeQuietly, keysOf, sleep, uniquePrefix, until } from '../../harness/util.js'

interface DefaultClient {
  readonly raw: RedisClient
  /** Resolves at the client's next ECONNREFUSED 'error' (after a kill, once it has tried to reconnect). */
  nextRefusal(): Promise<void>
  close(): void
}

/**
 * An 'error' listener, as every user adds, that also tells when the client reports ECONNREFUSED. A
 * wait that runs out names what the client did report meanwhile (its errors, and whether it became
 * ready again) and who listens on the server's `port` then, so that a slow or missing refusal says
 * which it was, and a client that reconnected says to whom.
 */
function refusals(client: { on(event: 'error' | 'ready', listener: (err: unknown) => void): unknown }, port: number): () => Promise<void> {
  const waiting: (() => void)[] = []
  const seen: string[] = []
  client.on('error', (err) => {
    const { code, message } = (err ?? {}) as { code?: string; message?: string }
    seen.push(code ?? message ?? String(err))
    if (code === 'ECONNREFUSED' || /ECONNREFUSED/.test(message ?? '')) for (const wake of waiting.splice(0)) wake()
  })
  // Ready again while a refusal is awaited: reconnected to whatever listens on the port now; say who.
  client.on('ready', () => void seen.push(waiting.length > 0 ? `ready (listening on port ${port}: ${listenersOn(port)})` : 'ready'))
  return () => {
    seen.length = 0
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const reported = seen.join(', ') || 'nothing'
        reject(new Error(`the client reported no ECONNREFUSED within 10 s; it reported: ${reported}; listening on port ${port} now: ${listenersOn(port)}`))
      }, 10_000)
      waiting.push(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }
}

/** Each client library at its default options; only an 'error' listener, as every user adds. */
const defaults = [
  {
    name: 'ioredis',
    async connect(url: string): Promise<DefaultClient> {
      const client = new Redis(url)
      const nextRefusal = refusals(client, Number(new URL(url).port))
      await new Promise<void>((resolve) => client.once('ready', () => resolve()))
      return { raw: client, nextRefusal, close: () => client.disconnect() }
    },
  },
  {
    name: 'node-redis',
    async connect(url: string): Promise<DefaultClient> {
      const client = createClient({ url })
      const nextRefusal = refusals(client, Number(new URL(url).port))
      await client.connect()
      return { raw: client, nextRefusal, close: () => void (client.isOpen && client.destroy()) }
    },
  },
] as const

/** The lease's LockLostError and when its signal aborted. */
const lossOf = (lease: Lease, within: number) =>
  new Promise<{ error: LockLostError; at: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the lease was not lost within ${within} ms`)), within)
    lease.signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer)
        resolve({ error: lease.signal.reason as LockLostError, at: performance.now() })
      },
      { once: true },
    )
  })

/** Every message along the `cause` chain. */
const causeText = (err: unknown): string => {
  const parts: string[] = []
  for (let e = err; e instanceof Error && parts.length < 5; e = e.cause) parts.push(e.message)
  return parts.join(' <- ')
}

/** `attempt` rejects with a "no reply" RedisError that names the client's ECONNREFUSED in its message and cause. */
async function expectNoReplyNamingRefused(attempt: Promise<unknown>, resolved: string): Promise<void> {
  const err = await attempt.then(
    () => resolved,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(RedisError)
  expect((err as Error).message).toMatch(/no reply/i)
  expect((err as Error).message).toMatch(/ECONNREFUSED/)
  expect(causeText((err as Error).cause)).toMatch(/ECONNREFUSED/)
}

describe.skipIf(!requireRedisOrSkip())('the loss reason says what happened', () => {
  describe.each(defaults)('$name at its default options', (library) => {
    let redis: RedisProcess
    let client: DefaultClient | undefined
    let other: DefaultClient | undefined
    let locks: Locks | undefined
    let rival: Locks | undefined
    let prefix: string
    beforeAll(async () => {
      redis = await startRedis()
    })
    afterAll(() => redis?.stop())
    // Fresh clients per test: one that a kill left reconnecting must not disturb the next test.
    beforeEach(async () => {
      prefix = uniquePrefix(`reason-${library.name}`)
      client = await library.connect(redis.url)
      other = await library.connect(redis.url)
      locks = createLocks({ redis: client.raw, prefix })
      rival = createLocks({ redis: other.raw, prefix })
    })
    afterEach(async () => {
      await closeQuietly([locks, rival])
      client?.close()
      other?.close()
    })

    /** `body` with an instance on a client of its own behind a fault proxy; all of it closed after. */
    async function throughProxy(body: (own: Locks, proxy: FaultProxy) => Promise<void>): Promise<void> {
      const proxy = await startFaultProxy({ host: redis.host, port: redis.port })
      const slow = await library.connect(proxy.url)
      const own = createLocks({ redis: slow.raw, prefix })
      try {
        await body(own, proxy)
      } finally {
        proxy.heal()
        await closeQuietly([own])
        slow.close()
        await proxy.close()
      }
    }

    it('Redis paused (SIGSTOP) under an auto-extended lease: lost at its deadline with reason "unreachable"', async () => {
      const ttl = 600
      const lease = await locks!.acquire('paused', { ttl, autoExtend: true })
      redis.pause()
      try {
        const { error, at } = await lossOf(lease, ttl * 3)
        expect(error).toBeInstanceOf(LockLostError)
        expect(error.reason).toBe('unreachable')
        expect(error.cause).toBeInstanceOf(RedisError)
        expect((error.cause as Error).message).toMatch(/no reply/i)
        expect(at).toBeLessThan(lease.deadline + 250)
      } finally {
        redis.resume()
      }
    })

    it('Redis killed (-9) under an auto-extended lease: "unreachable", and the cause carries what the client reported (ECONNREFUSED)', async () => {
      const ttl = 900
      const lease = await locks!.acquire('killed', { ttl, autoExtend: true })
      await redis.kill9()
      try {
        const { error, at } = await lossOf(lease, ttl * 3)
        expect(error.reason).toBe('unreachable')
        expect(at).toBeLessThan(lease.deadline + 250)
        expect(causeText(error)).toMatch(/ECONNREFUSED/)
      } finally {
        await redis.restart()
      }
    })

    it('Redis down: tryAcquire\'s "no reply" RedisError names the client\'s ECONNREFUSED in its message and cause', async () => {
      const refused = client!.nextRefusal()
      await redis.kill9()
      try {
        await refused // the client has tried to reconnect by now, and was refused
        await expectNoReplyNamingRefused(locks!.tryAcquire('down', { timeout: 500 }), 'acquired')
      } finally {
        await redis.restart()
      }
    })

    it("Redis down: fencedSet's \"no reply\" RedisError names the client's ECONNREFUSED in its message and cause, as the locks' do", async () => {
      const lease = await locks!.acquire('guarded', { ttl: 5_000 })
      expect(await fencedSet(client!.raw, `${prefix}balance`, '1', lease.fence)).toBe(true) // the guard has met this client
      const refused = client!.nextRefusal()
      await redis.kill9()
      try {
        await refused // the client has tried to reconnect by now, and was refused
        await expectNoReplyNamingRefused(fencedSet(client!.raw, `${prefix}balance`, '2', lease.fence, { timeout: 500 }), 'written')
      } finally {
        await redis.restart()
      }
    })

    it('the lock deleted and taken by another behind an auto-extended holder: "refused" at its next renewal', async () => {
      const ttl = 900
      const lease = await locks!.acquire('taken', { ttl, autoExtend: true })
      const lost = lossOf(lease, ttl * 2)
      await redis.cli('DEL', keysOf(prefix, 'taken').lock)
      const next = await rival!.acquire('taken', { ttl: 5_000, wait: 0 })
      const { error, at } = await lost
      expect(error.reason).toBe('refused')
      expect(at).toBeLessThan(lease.deadline - 100) // told by Redis, not by the clock
      expect(await next.release()).toBe(true)
    })

    it('Redis answers, but later than the new ttl: the extension rejects with reason "expired"', async () => {
      await throughProxy(async (own, proxy) => {
        const lease = await own.acquire('late', { ttl: 5_000 })
        proxy.setDelay(300)
        const err = await lease.extend(150).then(
          () => 'extended',
          (e: unknown) => e,
        )
        expect(err).toBeInstanceOf(LockLostError)
        expect((err as LockLostError).reason).toBe('expired')
        expect((lease.signal.reason as LockLostError).reason).toBe('expired')
      })
    })

    it('the event loop blocked past the deadline of an auto-extended lease: "expired" (Redis was never asked in time), and no late renewal is sent', async () => {
      const ttl = 300
      // Reset before the acquire: a reset after it (redis-cli is a process to start) could take
      // longer than ttl/3 on a loaded machine and let the first renewal go out, legitimately,
      // before the block began (then the lease lives on, renewed, and the test means nothing).
      await redis.cli('CONFIG', 'RESETSTAT')
      const lease = await locks!.acquire('blocked', { ttl, autoExtend: true })
      // Blocked from the grant on, with no turn of the event loop in between, to past the deadline.
      const blockedUntil = lease.deadline + 100
      while (performance.now() < blockedUntil) {
        // a long synchronous computation: no timer runs, the renewal at ttl/3 is never sent in time
      }
      const { error } = await lossOf(lease, 1_000)
      expect(error.reason).toBe('expired')
      // The acquire's script call, and not one more (EVALSHA, or EVAL on a new client): no late
      // renewal. (Failed calls left out: an EVALSHA refused with NOSCRIPT is followed by its EVAL.)
      const stats = await redis.cli('INFO', 'commandstats')
      const ran = [...stats.matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+),.*failed_calls=(\d+)/gm)].reduce((n, m) => n + Number(m[1]) - Number(m[2]), 0)
      expect(ran, stats).toBe(1)
    })

    it('the event loop blocked while a renewal\'s reply was on its way: "expired" (Redis answered; the reply was read late), not "unreachable"', async () => {
      await throughProxy(async (own, proxy) => {
        proxy.setDelay(100, { direction: 'down' }) // replies take 100 ms; requests arrive at once
        const ttl = 600
        const lease = await own.acquire('read-late', { ttl, autoExtend: true })
        // The renewal goes out a third of the ttl in; its reply is held 100 ms by the proxy (which
        // runs in this process). Wait until the renewal has run in Redis (the lock's ttl there goes
        // back up), then one more turn of the event loop, in which the proxy reads Redis' reply and
        // holds it: only then block, from before the reply reaches the client until past the
        // deadline. (A fixed sleep to "just after the latest send" raced the proxy's forwarding on
        // a loaded machine: the renewal reached Redis only after the block, and was 'unreachable'.)
        let lowest = Number.POSITIVE_INFINITY
        await until(
          'the renewal ran in Redis',
          async () => {
            const left = Number((await rival!.inspect('read-late')).ttl)
            if (left > lowest + 50) return true
            lowest = Math.min(lowest, left)
            return false
          },
          { timeout: 3 * ttl, every: 5 },
        )
        await new Promise((resolve) => setImmediate(resolve))
        const blockedUntil = lease.deadline + 150
        while (performance.now() < blockedUntil) {
          // a long synchronous computation: the reply arrives meanwhile, unread
        }
        const { error } = await lossOf(lease, 1_000)
        expect(error.reason).toBe('expired')
      })
    })

    it('extend() after the lease\'s own release(): LockLostError with reason "released" that says so, not a Redis refusal', async () => {
      const lease = await locks!.acquire('released', { ttl: 5_000 })
      expect(await lease.release()).toBe(true)
      const err = await lease.extend().then(
        () => 'extended',
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(LockLostError)
      expect((err as LockLostError).reason).toBe('released')
      expect((err as Error).message).toMatch(/released/)
      expect((err as Error).message).not.toMatch(/Redis reports/)
      // While the release is still in flight, too.
      const second = await locks!.acquire('released', { ttl: 5_000 })
      const releasing = second.release()
      await expect(second.extend()).rejects.toMatchObject({ name: 'LockLostError', reason: 'released' })
      expect(await releasing).toBe(true)
    })
  })

  it("remembering the client's errors changes nothing for its user: ioredis with no 'error' listener of theirs still prints its own \"Unhandled error event\"", async () => {
    const port = await freePort() // nothing listens there
    const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true })
    const printed = vi.spyOn(console, 'error').mockImplementation(() => {})
    const locks = createLocks({ redis: client, prefix: uniquePrefix('unheard') })
    try {
      client.connect().catch(() => {})
      const err = await locks.tryAcquire('r', { timeout: 300 }).then(
        () => 'acquired',
        (e: unknown) => e,
      )
      expect((err as Error).message).toMatch(/ECONNREFUSED/)
      expect(printed.mock.calls.some(([first]) => first === '[ioredis] Unhandled error event:')).toBe(true)
    } finally {
      printed.mockRestore()
      await closeQuietly([locks])
      client.disconnect()
    }
  })

  describe('quorum of 3 (ioredis, node-redis, ioredis at their defaults)', () => {
    const MAX_TTL = 1_000
    let nodes: RedisProcess[]
    let clients: DefaultClient[]
    let locks: Locks
    beforeAll(async () => {
      nodes = await Promise.all([startRedis(), startRedis(), startRedis()])
      clients = await Promise.all(nodes.map((n, i) => defaults[i % 2]!.connect(n.url)))
      locks = createLocks({ redis: clients.map((c) => c.raw), prefix: uniquePrefix('reason-quorum'), maxTtl: MAX_TTL, ttl: MAX_TTL })
      await mature(nodes, MAX_TTL)
    })
    afterAll(async () => {
      await closeQuietly([locks])
      for (const c of clients ?? []) c.close()
      await Promise.all((nodes ?? []).map((n) => n.stop()))
    })

    it('a majority paused under auto-extended leases (alone, and renewed in one batch): lost at the first unconfirmed renewal with reason "unreachable"', async () => {
      const alone = await locks.acquire('q-paused', { autoExtend: true })
      await sleep(MAX_TTL / 10) // off the others' renewal grid point
      const batch = await Promise.all(['q-b1', 'q-b2', 'q-b3'].map((r) => locks.acquire(r, { autoExtend: true })))
      const leases = [alone, ...batch]
      const losses = leases.map((lease) => lossOf(lease, MAX_TTL * 3))
      nodes[0]!.pause()
      nodes[1]!.pause()
      try {
        for (const [i, lease] of leases.entries()) {
          const { error, at } = await losses[i]!
          expect(error.reason).toBe('unreachable')
          expect(error.cause).toMatchObject({ name: 'QuorumError' })
          expect(at).toBeLessThan(lease.deadline)
        }
      } finally {
        nodes[0]!.resume()
        nodes[1]!.resume()
      }
    })

    it('the lock deleted on a majority: "refused"', async () => {
      const lease = await locks.acquire('q-deleted', { autoExtend: true })
      const lost = lossOf(lease, MAX_TTL * 3)
      const [key] = await nodes[0]!.cli('KEYS', '*{q-deleted}:L').then((k) => k.split('\n'))
      await Promise.all([nodes[0]!.cli('DEL', key!), nodes[1]!.cli('DEL', key!)])
      const { error } = await lost
      expect(error.reason).toBe('refused')
    })
  })
})
