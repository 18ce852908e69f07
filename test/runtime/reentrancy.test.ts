// Nested code that takes a lock its own call chain holds (issues 9 and 18): it re-enters
// (reentrant: true) or fails at once with LockReentryError; it never waits for itself. This holds
// for every kind (mutex, all-or-nothing multi, read/write, semaphore) and every nesting of them
// that shares a lock; kinds of the same name are independent. A concurrent call chain of the same
// process waits as any other process would.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { LockReentryError, type Lease, type Locks } from '../../src/index.js'
import { record, recordAcquires } from '../../harness/telemetry.js'
import { uniquePrefix, until } from '../../harness/util.js'
import { describeRedis, perAdapter } from '../../harness/per-adapter.js'

describeRedis('reentrancy', (server) => {
  // A nested call that re-enters or is refused never gets as far as an acquisition: it starts
  // none (no attempt, no wait). Only the tests of this file run meanwhile, one at a time.
  const starts = record('fencelock:acquire:start')
  const acquires = recordAcquires()
  afterAll(() => {
    starts.stop()
    acquires.stop()
  })
  /** Runs `fn`; returns what it returned (or threw) and the acquisitions that started and ended meanwhile. */
  const during = async <T>(fn: () => Promise<T>) => {
    const [s, e] = [starts.events.length, acquires.events.length]
    const result = await fn().then(
      (v) => v,
      (err: unknown) => err,
    )
    return { result, started: starts.events.slice(s), ended: acquires.events.slice(e) }
  }

  perAdapter(
    server,
    (t) => {
      let plain: Locks
      beforeAll(() => {
        plain = t.open({ prefix: uniquePrefix('plain') })
      })

      it('16. reentrant: a nested withLock gets the outer lease at once (same token, fence, signal); only the outermost release frees the lock', async () => {
        const result = await t.locks.withLock(
          'r',
          async (outer) => {
            const { result: inner, started } = await during(() =>
              t.locks.withLock('r', async (lease) => {
                expect(lease.token).toBe(outer.token)
                expect(lease.fence).toBe(outer.fence)
                expect(lease.signal).toBe(outer.signal)
                // Deeper still, through a timer and a manual acquire.
                const deeper = await new Promise<number>((resolve, reject) =>
                  setTimeout(() => t.locks.acquire('r').then((l) => l.release().then(() => resolve(l.fence)), reject), 5),
                )
                expect(deeper).toBe(outer.fence)
                return lease.fence
              }),
            )
            // At once: neither nested call started an acquisition (no attempt, no wait).
            expect(started).toEqual([])
            expect((await t.locks.inspect('r')).token).toBe(outer.token) // inner releases freed nothing
            return inner
          },
          { wait: 15_000 },
        )
        expect(typeof result).toBe('number')
        expect((await t.locks.inspect('r')).held).toBe(false)
      })

      it('reentrant: a concurrent call chain of the same process waits for the lock, as another process would', async () => {
        const order: string[] = []
        let aIn!: () => void
        const aHolds = new Promise<void>((resolve) => {
          aIn = resolve
        })
        await Promise.all([
          t.locks.withLock('c', async () => {
            order.push('a in')
            aIn()
            // a keeps the lock until b (another call chain) is in line for it in Redis.
            await until('b is in line for c', async () => (await t.locks.inspect('c')).waiters === 1)
            order.push('a out')
          }),
          aHolds.then(() =>
            t.locks.withLock('c', async () => {
              order.push('b in')
            }),
          ),
        ])
        expect(order).toEqual(['a in', 'a out', 'b in'])
      })

      it('16. not reentrant: a nested withLock, acquire or tryAcquire of a held resource rejects within milliseconds with LockReentryError, even with wait: Infinity', async () => {
        await plain.withLock('n', async () => {
          for (const nested of [() => plain.withLock('n', () => 1, { wait: Infinity }), () => plain.acquire('n'), () => plain.tryAcquire('n')]) {
            const { result: err, started } = await during((): Promise<unknown> => nested())
            expect(err).toBeInstanceOf(LockReentryError)
            expect((err as LockReentryError).code).toBe('LOCK_REENTRY')
            expect((err as Error).message).toMatch(/already held by this call chain/)
            // Refused before any attempt or wait: it started no acquisition.
            expect(started).toEqual([])
          }
          // Another resource nested inside is an ordinary lock.
          expect(await plain.withLock('other', (l) => l.fence)).toBeGreaterThan(0)
        })
      })

      // Each of these waited its whole `wait` for itself before, then threw LockTimeoutError.
      let n = 0
      const SELF_WAITS: readonly { name: string; nest: (locks: Locks, id: string) => Promise<unknown> }[] = [
        { name: 'withLocks containing a mutex the chain holds', nest: (l, id) => l.withLock(id, () => l.withLocks([id, `${id}b`], () => 1, { wait: 2_000 })) },
        { name: 'acquireAll containing a mutex the chain holds', nest: (l, id) => l.withLock(id, () => l.acquireAll([`${id}b`, id], { wait: 2_000 })) },
        {
          name: 'withLock of a resource of an enclosing withLocks',
          nest: (l, id) => l.withLocks([id, `${id}y`], () => l.withLock(id, () => 1, { wait: 2_000 })),
        },
        { name: 'acquire of a resource of an enclosing withLocks', nest: (l, id) => l.withLocks([id, `${id}y`], () => l.acquire(`${id}y`, { wait: 2_000 })) },
        { name: 'tryAcquire of a resource of an enclosing withLocks', nest: (l, id) => l.withLocks([id, `${id}y`], () => l.tryAcquire(id)) },
        {
          name: 'withLocks overlapping an enclosing withLocks',
          nest: (l, id) => l.withLocks([id, `${id}y`], () => l.withLocks([`${id}y`, `${id}z`], () => 1, { wait: 2_000 })),
        },
        { name: 'write inside write', nest: (l, id) => l.readWrite(id).withWrite(() => l.readWrite(id).withWrite(() => 1, { wait: 2_000 })) },
        { name: 'read inside write', nest: (l, id) => l.readWrite(id).withWrite(() => l.readWrite(id).withRead(() => 1, { wait: 2_000 })) },
        { name: 'tryRead inside write', nest: (l, id) => l.readWrite(id).withWrite(() => l.readWrite(id).tryRead()) },
        { name: 'read inside read', nest: (l, id) => l.readWrite(id).withRead(() => l.readWrite(id).read({ wait: 2_000 })) },
        { name: 'write inside read', nest: (l, id) => l.readWrite(id).withRead(() => l.readWrite(id).withWrite(() => 1, { wait: 2_000 })) },
        {
          name: 'permit inside a permit, limit 1',
          nest: (l, id) => l.semaphore(id, { limit: 1 }).withPermit(() => l.semaphore(id, { limit: 1 }).withPermit(() => 1, { wait: 2_000 })),
        },
        {
          name: 'permit inside a permit, limit 3',
          nest: (l, id) => l.semaphore(id, { limit: 3 }).withPermit(() => l.semaphore(id, { limit: 3 }).acquire({ wait: 2_000 })),
        },
        {
          name: 'tryAcquire of a permit inside a permit',
          nest: (l, id) => l.semaphore(id, { limit: 1 }).withPermit(() => l.semaphore(id, { limit: 1 }).tryAcquire()),
        },
      ]

      it.each(SELF_WAITS)('not reentrant: $name rejects with LOCK_REENTRY long before its wait', async ({ nest }) => {
        const { result: err, started, ended } = await during(() => nest(plain, `self${++n}`))
        expect(err).toBeInstanceOf(LockReentryError)
        expect((err as LockReentryError).code).toBe('LOCK_REENTRY')
        expect((err as Error).message).toMatch(/already held by this call chain/)
        // The only acquisition that started is the outer one, and it got its lock without waiting:
        // the nested one (with its 2,000 ms wait) was refused before any attempt, not timed out.
        expect(started).toHaveLength(1)
        expect(ended.map((e) => [e.outcome, e.contended])).toEqual([['acquired', false]])
      })

      it("write inside one's own read rejects with LOCK_REENTRY even when reentrant (upgrading would deadlock)", async () => {
        const rw = t.locks.readWrite(`upgrade${++n}`)
        for (const nested of [
          () => rw.withWrite(() => 1, { wait: 2_000 }),
          () => rw.write({ wait: 2_000 }),
          () => rw.tryWrite(),
        ] as (() => Promise<unknown>)[]) {
          const { result: err, started } = await during(() => rw.withRead(nested))
          expect(err).toBeInstanceOf(LockReentryError)
          expect((err as Error).message).toMatch(/read lease .*upgrad/)
          // Only the outer read lease was acquired: the write was refused before any attempt or wait.
          expect(started.map((e) => e.kind)).toEqual(['read'])
        }
      })

      /** Asserts `inner` is the outer grant seen again: same token, and its end leaves `outer` held. */
      const reenters = async (inner: Lease, outer: Lease, stillHeld: () => Promise<boolean>) => {
        expect(inner.token).toBe(outer.token)
        expect(inner.signal).toBe(outer.signal)
        expect(await inner.release()).toBe(true)
        expect(inner.held).toBe(false)
        expect(outer.held).toBe(true)
        expect(await stillHeld()).toBe(true)
      }

      it("reentrant: a mutex inside withLocks of it re-enters that resource's grant, with its fence; the lock stays the outer's", async () => {
        const id = `m${++n}`
        await t.locks.withLocks([`${id}y`, id], async (outer) => {
          await t.locks.withLock(
            id,
            async (inner) => {
              expect(inner.resource).toBe(id)
              expect(inner.fence).toBe(outer.fences[id])
              expect((await t.locks.inspect(id)).token).toBe(outer.token)
            },
            { wait: 2_000 },
          )
          {
            await using inner = await t.locks.acquire(`${id}y`, { wait: 2_000 })
            expect(inner.fence).toBe(outer.fences[`${id}y`])
          }
          expect((await t.locks.inspect(id)).token).toBe(outer.token)
          expect((await t.locks.inspect(`${id}y`)).token).toBe(outer.token)
        })
        expect((await t.locks.inspect(id)).held).toBe(false)
      })

      it('reentrant: withLocks containing held mutexes re-enters those and takes the rest; its end gives back only the rest', async () => {
        const id = `p${++n}`
        await t.locks.withLock(id, async (outer) => {
          const { result, ended } = await during(() =>
            t.locks.withLocks(
              [`${id}b`, id],
              async (inner) => {
                expect(inner.resources).toEqual([id, `${id}b`])
                expect(inner.fences[id]).toBe(outer.fence)
                expect((await t.locks.inspect(`${id}b`)).held).toBe(true)
                // All of them held already: nothing is taken.
                const innermost = await during(() =>
                  t.locks.withLocks([id, `${id}b`], async (l) => {
                    expect(l.fences).toEqual(inner.fences)
                  }),
                )
                expect(innermost.result).toBeUndefined()
                expect(innermost.started).toEqual([])
              },
              { wait: 2_000 },
            ),
          )
          expect(result).toBeUndefined()
          // It never waited for itself: what it took (the rest) it got at its first attempt.
          expect(ended.map((e) => [e.outcome, e.contended, e.wakes])).toEqual([['acquired', false, []]])
          expect((await t.locks.inspect(`${id}b`)).held).toBe(false)
          expect((await t.locks.inspect(id)).token).toBe(outer.token)
        })
        expect((await t.locks.inspect(id)).held).toBe(false)
      })

      it('reentrant: write in write and read in write re-enter the write lease; read in read re-enters the read lease', async () => {
        const rw = t.locks.readWrite(`rw${++n}`)
        await rw.withWrite(async (outer) => {
          const writing = async () => (await rw.inspect()).writer?.token === outer.token
          await rw.withWrite((inner) => reenters(inner, outer, writing), { wait: 2_000 })
          await rw.withRead((inner) => reenters(inner, outer, writing), { wait: 2_000 })
          await reenters((await rw.tryRead())!, outer, writing)
          {
            await using inner = await rw.read({ wait: 2_000 })
            expect(inner.token).toBe(outer.token)
          }
          expect(await writing()).toBe(true)
        })
        await rw.withRead(async (outer) => {
          const reading = async () => (await rw.inspect()).readers.some((r) => r.token === outer.token)
          await rw.withRead((inner) => reenters(inner, outer, reading), { wait: 2_000 })
          await reenters(await rw.read({ wait: 2_000 }), outer, reading)
        })
        expect((await rw.inspect()).readers).toEqual([])
      })

      it('reentrant: a permit inside a permit of the same semaphore re-enters it (any limit); one permit stays taken', async () => {
        for (const limit of [1, 2]) {
          const pool = t.locks.semaphore(`s${++n}`, { limit })
          await pool.withPermit(async (outer) => {
            const holding = async () => (await pool.inspect()).permits.length === 1
            await pool.withPermit((inner) => reenters(inner, outer, holding), { wait: 2_000 })
            await reenters(await pool.acquire({ wait: 2_000 }), outer, holding)
            await reenters((await pool.tryAcquire())!, outer, holding)
          })
          expect((await pool.inspect()).permits).toEqual([])
        }
      })

      it('a mutex, a semaphore and a read/write lock of one name are independent: nesting them takes each anew', async () => {
        for (const locks of [plain, t.locks]) {
          const id = `k${++n}`
          await locks.withLock(id, async (mutexLease) => {
            await locks.semaphore(id, { limit: 1 }).withPermit(async (permit) => {
              await locks.readWrite(id).withWrite(async (write) => {
                expect(new Set([mutexLease.token, permit.token, write.token]).size).toBe(3)
                expect(await locks.withLock(`${id}x`, (l) => l.held)).toBe(true)
              })
            })
          })
        }
      })
    },
    { prefix: 'reentrant', locks: { reentrant: true } },
  )
})
