// The counting semaphore on one Redis, once per client adapter: at most `limit` permits, each a
// Lease of its own that expires alone by the server's clock; fences across permits; FIFO,
// event-driven waiting; the limit agreed by every caller; independent of a mutex of the same name.
import { expect, it } from 'vitest'
import { InvalidArgumentError, LockLostError, type Lease } from '../../../src/index.js'
import { scriptCalls } from '../../../harness/commandstats.js'
import { record, recordAcquires } from '../../../harness/telemetry.js'
import { nameMaker, sleep, until } from '../../../harness/util.js'
import { describeRedis, perAdapter } from '../../../harness/per-adapter.js'

describeRedis('semaphore', (server) => {
  perAdapter(
    server,
    (t) => {
      const name = nameMaker()

      it('grants at most `limit` permits; each is a Lease with a larger fence than every earlier one', async () => {
        const pool = t.locks.semaphore(name('basic'), { limit: 2 })
        const a = await pool.acquire({ ttl: 5_000 })
        const b = await pool.acquire({ ttl: 5_000 })
        expect(b.fence).toBeGreaterThan(a.fence)
        expect(a.token).not.toBe(b.token)
        expect(await pool.tryAcquire()).toBeNull()
        expect(await t.other.semaphore(pool.name, { limit: 2 }).tryAcquire()).toBeNull()
        const info = await pool.inspect()
        expect(info.limit).toBe(2)
        expect(info.held).toBe(2)
        expect(info.permits.map((p) => p.token).sort()).toEqual([a.token, b.token].sort())
        for (const p of info.permits) expect(p.ttl).toBeGreaterThan(4_000)
        expect(await a.release()).toBe(true)
        const c = (await pool.tryAcquire())!
        expect(c).not.toBeNull()
        expect(c.fence).toBeGreaterThan(b.fence)
        await Promise.all([b.release(), c.release()])
        expect((await pool.inspect()).held).toBe(0)
      })

      it('a waiter is woken by a release within milliseconds; two releases wake two waiters', async () => {
        const acquires = recordAcquires()
        try {
          const pool = t.locks.semaphore(name('wake'), { limit: 2 })
          const theirs = t.other.semaphore(pool.name, { limit: 2 })
          const held = [await pool.acquire({ ttl: 10_000 }), await pool.acquire({ ttl: 10_000 })]
          await server.redis.cli('CONFIG', 'RESETSTAT')
          const first = theirs.acquire({ ttl: 5_000, wait: 8_000 })
          const second = t.locks.semaphore(pool.name, { limit: 2 }).acquire({ ttl: 5_000, wait: 8_000 })
          // Each waiter's first attempt puts it in line, and a first wait looks once more when its
          // wake-up channel is active: after those 4 attempts, only a release can let them in.
          await until('both waiters are in line and listening', async () => (await scriptCalls(server.redis)) >= 4, { timeout: 3_000 })
          expect(await t.client.command('ZCARD', `${t.prefix}{${pool.name}}:S:Q`)).toBe(2)
          await Promise.all(held.map((p) => p.release()))
          const got = await Promise.all([first, second])
          // Each waiter went in on an attempt that a release's message sent, not on the re-check at
          // the holders' 10 s ttl.
          const woken = acquires.of(pool.name).filter((e) => e.kind === 'semaphore' && e.contended && e.outcome === 'acquired')
          expect(woken.map((e) => e.token).sort()).toEqual(got.map((p) => p.token).sort())
          for (const e of woken) {
            expect(e.wakes.at(-1)).toBe('release')
            expect(e.wakes).not.toContain('recheck')
          }
          await Promise.all(got.map((p) => p.release()))
        } finally {
          acquires.stop()
        }
      })

      it('a parked waiter costs a handful of Redis commands, not polling', async () => {
        const pool = t.locks.semaphore(name('idle'), { limit: 1 })
        const holder = await pool.acquire({ ttl: 10_000 })
        await server.redis.cli('CONFIG', 'RESETSTAT')
        const waiting = t.other.semaphore(pool.name, { limit: 1 }).acquire({ ttl: 5_000, wait: 8_000 })
        // Its first attempt, and one more once its wake-up channel is active: then it is parked.
        await until('the waiter is in line and listening', async () => (await scriptCalls(server.redis)) >= 2, { timeout: 3_000 })
        expect(await t.client.command('ZCARD', `${t.prefix}{${pool.name}}:S:Q`)).toBe(1)
        const before = Number(/total_commands_processed:(\d+)/.exec(await server.redis.cli('INFO', 'stats'))![1])
        await sleep(2_000) // time must pass: "no polling" is what does not happen meanwhile
        const after = Number(/total_commands_processed:(\d+)/.exec(await server.redis.cli('INFO', 'stats'))![1])
        expect(after - before - 1, 'commands while one waiter sat in line for 2 s').toBeLessThanOrEqual(5)
        await holder.release()
        await (await waiting).release()
      })

      it('a permit that is not extended expires alone (by the server clock); its signal aborts; another takes its slot', async () => {
        const pool = t.locks.semaphore(name('expire'), { limit: 1 })
        const short = await pool.acquire({ ttl: 300 })
        const reason = await new Promise<unknown>((resolve) => short.signal.addEventListener('abort', () => resolve(short.signal.reason)))
        expect(reason).toBeInstanceOf(LockLostError)
        expect((reason as LockLostError).reason).toBe('expired')
        // The signal aborts at the local deadline, a drift margin before the server expires the slot.
        await until('the server expired the slot', async () => (await pool.inspect()).held === 0, { timeout: 2_000 })
        const next = (await pool.tryAcquire())!
        expect(next).not.toBeNull()
        expect(next.fence).toBeGreaterThan(short.fence)
        expect(await short.release()).toBe(false)
        await next.release()
      })

      it('withPermit runs fn auto-extended and releases; extend and release by token', async () => {
        const pool = t.locks.semaphore(name('with'), { limit: 1 })
        const extends_ = record('fencelock:extend')
        try {
          const fence = await pool.withPermit(
            async (permit) => {
              // Renewals go out a third of the ttl apart: after three, fn has outlived the 200 ms ttl
              // the permit started with, and holds it only by being extended.
              const mine = () => extends_.events.filter((e) => e.token === permit.token)
              await until('the permit was extended three times', () => mine().filter((e) => e.outcome === 'extended').length >= 3, { timeout: 3_000 })
              expect(mine().map((e) => e.outcome)).not.toContain('lost')
              expect(permit.held).toBe(true)
              return permit.fence
            },
            { ttl: 200 },
          )
          expect(fence).toBeGreaterThan(0)
        } finally {
          extends_.stop()
        }
        expect((await pool.inspect()).held).toBe(0)
        const permit = await pool.acquire({ ttl: 1_000 })
        const theirs = t.other.semaphore(pool.name, { limit: 1 })
        expect(await theirs.extend(permit.token, 20_000)).toBe(true)
        expect((await pool.inspect()).permits[0]!.ttl).toBeGreaterThan(15_000)
        expect(await theirs.release(permit.token)).toBe(true)
        expect(await theirs.release(permit.token)).toBe(false)
        expect((await pool.inspect()).held).toBe(0)
      })

      it("refuses another limit for the same name while permits are held, in this instance and across instances; the next caller's limit applies once none is held", async () => {
        const pool = t.locks.semaphore(name('limit'), { limit: 2 })
        expect(() => t.locks.semaphore(pool.name, { limit: 3 })).toThrow(InvalidArgumentError)
        const permit = await pool.acquire()
        const err = await t.other
          .semaphore(pool.name, { limit: 3 })
          .acquire({ wait: 500 })
          .catch((e: unknown) => e)
        expect(err).toBeInstanceOf(InvalidArgumentError)
        expect((err as Error).message).toMatch(/limit 2.*limit 3/)
        await permit.release()
        const three = t.other.semaphore(pool.name, { limit: 3 })
        const taken = await Promise.all([three.acquire(), three.acquire(), three.acquire()])
        expect((await three.inspect()).limit).toBe(3)
        await Promise.all(taken.map((p) => p.release()))
      })

      it('bad input gets a typed error naming the value', () => {
        expect(() => t.locks.semaphore('', { limit: 1 })).toThrow(/`name`.*got ""/)
        expect(() => t.locks.semaphore('x', { limit: 0 })).toThrow(/`limit`.*got 0/)
        expect(() => t.locks.semaphore('x', { limit: 1.5 })).toThrow(/`limit`.*got 1.5/)
        expect(() => t.locks.semaphore('x', { limit: 1_001 })).toThrow(/`limit`.*got 1001/)
        expect(() => t.locks.semaphore('x', undefined as unknown as { limit: number })).toThrow(InvalidArgumentError)
      })

      it('a semaphore and a mutex of the same name never share a key', async () => {
        const shared = name('same-name')
        const lock = await t.locks.acquire(shared, { ttl: 5_000 })
        const permit = (await t.locks.semaphore(shared, { limit: 1 }).tryAcquire())!
        expect(permit).not.toBeNull()
        expect((await t.locks.inspect(shared)).token).toBe(lock.token)
        await Promise.all([lock.release(), permit.release()])
      })

      it('a client whose wall clock is hours off neither steals nor leaks permits (no Date.now in any decision)', async () => {
        const pool = t.locks.semaphore(name('skew'), { limit: 1 })
        const realNow = Date.now
        const held: Lease[] = []
        try {
          Date.now = () => realNow() + 5 * 3_600_000
          held.push(await pool.acquire({ ttl: 400 }))
          Date.now = () => realNow() - 5 * 3_600_000
          expect(await t.other.semaphore(pool.name, { limit: 1 }).tryAcquire()).toBeNull() // not stolen
          // Not leaked: the server expires it at its 400 ms ttl, and another instance gets the permit then.
          held.push(await until('the server expired the permit', () => t.other.semaphore(pool.name, { limit: 1 }).tryAcquire(), { timeout: 3_000 }))
        } finally {
          Date.now = realNow
          await Promise.all(held.map((p) => p.release()))
        }
      })
    },
    { prefix: 'sem' },
  )
})
