// All-or-nothing locks on several resources (issue 9): one lease, a fence per resource larger than
// every earlier one of that resource, no deadlock between [a, b] and [b, a], nothing held by a
// failed attempt, a multi-waiter not starved by single-resource lockers, a signal that aborts when
// any resource is lost.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { expect, it, onTestFinished } from 'vitest'
import { LockLostError, LockTimeoutError, type Locks } from '../../../src/index.js'
import { recordAcquires } from '../../../harness/telemetry.js'
import { keysOf, sleep, until } from '../../../harness/util.js'
import { describeRedis, perAdapter } from '../../../harness/per-adapter.js'

describeRedis('acquireAll / withLocks', (server) => {
  perAdapter(
    server,
    (t) => {
      let n = 0
      const acct = (i: number) => `account:${n}:${i}`

      it('locks every resource with one lease; each fence is larger than every earlier fence of its resource', async () => {
        n++
        const earlier = await t.locks.acquire(acct(1))
        await earlier.release()
        const lease = await t.locks.acquireAll([acct(2), acct(1), acct(1)])
        expect(lease.resources).toEqual([acct(1), acct(2)])
        expect(lease.fences[acct(1)]).toBeGreaterThan(earlier.fence)
        expect(Object.keys(lease.fences).sort()).toEqual([acct(1), acct(2)])
        for (const r of lease.resources) expect((await t.locks.inspect(r)).token).toBe(lease.token)
        expect(await t.other.tryAcquire(acct(2))).toBeNull()
        expect(await lease.release()).toBe(true)
        for (const r of lease.resources) expect((await t.locks.inspect(r)).held).toBe(false)
        const later = await t.other.acquire(acct(2))
        expect(later.fence).toBeGreaterThan(lease.fences[acct(2)]!)
        await later.release()
      })

      it('15. all or nothing: with account 2 held elsewhere, acquireAll([1, 2], { wait: 0 }) fails and account 1 stays free for others, during and after', async () => {
        n++
        const held = await t.other.acquire(acct(2), { ttl: 5_000 })
        const attempt = t.locks.acquireAll([acct(1), acct(2)], { wait: 0 }).then(
          (l) => l,
          (e: unknown) => e,
        )
        const other = (await t.other.tryAcquire(acct(1)))! // during
        expect(other).not.toBeNull()
        await other.release()
        expect(await attempt).toBeInstanceOf(LockTimeoutError)
        expect(await t.client.command('EXISTS', keysOf(t.prefix, acct(1)).lock)).toBe(0) // after
        expect(await t.client.command('ZCARD', keysOf(t.prefix, acct(1)).queue)).toBe(0)
        await held.release()
      })

      it('15. [a, b] and [b, a] at once, many times over: no deadlock, every critical section exclusive', async () => {
        n++
        let inside = 0
        let overlaps = 0
        const run = (locks: Locks, order: number[]) =>
          locks.withLocks(
            order.map(acct),
            async () => {
              if (++inside > 1) overlaps++
              await t.client.command('PING') // the section spans a round trip, as real work does
              inside--
            },
            { wait: 20_000 },
          )
        await Promise.all(Array.from({ length: 40 }, (_, i) => run(i % 2 ? t.locks : t.other, i % 2 ? [1, 2] : [2, 1])))
        expect(overlaps).toBe(0)
      }, 30_000)

      it('a multi-waiter is not starved by a stream of single-resource lockers', async () => {
        n++
        const acquires = recordAcquires()
        onTestFinished(() => acquires.stop())
        let stop = false
        let multiCalled = false
        let multiIn = false
        let entered = 0
        // Singles that arrived after the multi-waiter asked and still got account 1 before it.
        let overtakers = 0
        const singles = (async () => {
          const runs: Promise<unknown>[] = []
          for (let i = 0; !stop && i < 200; i++) {
            const afterMulti = multiCalled
            const single = () => {
              entered++
              if (afterMulti && !multiIn) overtakers++
              return sleep(30) // the workload: each single holds 30 ms
            }
            runs.push(t.other.withLock(acct(1), single, { wait: 10_000 }).catch(() => {}))
            await sleep(10) // the workload: a single arrives every 10 ms
          }
          await Promise.all(runs)
        })()
        await until('the stream is flowing', () => entered >= 3, { timeout: 3_000 })
        multiCalled = true
        const token = await t.locks.withLocks([acct(1), acct(2)], (lease) => ((multiIn = true), lease.token), { wait: 10_000 })
        stop = true
        await singles
        // FIFO on account 1: the multi-waiter waits for those queued before it (about 3 at 30 ms), not for the stream.
        expect(overtakers, 'singles that came after the multi-waiter and got in before it').toBe(0)
        // It went in on a wake-up, not on a re-check at a holder's ttl: a single's release, or (when
        // one came before its wake-up channel was active) the look it takes once it is.
        const wakes = acquires.events.find((e) => e.kind === 'multi' && e.token === token)!.wakes
        expect(['release', 'subscribed']).toContain(wakes.at(-1))
        expect(wakes).not.toContain('recheck')
      }, 30_000)

      it("the lease's signal aborts when any one resource is lost; withLocks then rejects with LockLostError", async () => {
        n++
        const err = await t.locks
          .withLocks(
            [acct(1), acct(2)],
            async (lease) => {
              await t.client.command('DEL', keysOf(t.prefix, acct(2)).lock) // lost behind the holder's back
              await new Promise((resolve) => lease.signal.addEventListener('abort', resolve))
              return 'done'
            },
            { ttl: 300 },
          )
          .then(
            (v) => v,
            (e: unknown) => e,
          )
        expect(err).toBeInstanceOf(LockLostError)
        expect(await t.client.command('EXISTS', keysOf(t.prefix, acct(1)).lock)).toBe(0) // the rest was given back
      })

      it('many resources at once (60 names of 20-odd characters): all locked by one lease, all given back', async () => {
        n++
        const names = Array.from({ length: 60 }, (_, i) => `${acct(i)}:${'x'.repeat(12)}`)
        const lease = await t.locks.acquireAll(names, { wait: 1_000 })
        expect(lease.resources).toEqual([...names].sort())
        for (const r of names) expect(await t.other.tryAcquire(r)).toBeNull()
        expect(await lease.release()).toBe(true)
        for (const r of names) expect((await t.locks.inspect(r)).held).toBe(false)
      })

      it('withLocks / acquireAll with options that are not an object: InvalidArgumentError naming them, nothing locked', async () => {
        n++
        const run = () => 'ran'
        await expect(t.locks.withLocks([acct(1)], run, 5 as never)).rejects.toThrow(/options.*got 5/)
        await expect(t.locks.acquireAll([acct(1)], 'fast' as never)).rejects.toThrow(/options.*got "fast"/)
        expect((await t.locks.inspect(acct(1))).held).toBe(false)
      })

      it('bad input: an empty list or a bad name is an InvalidArgumentError', async () => {
        await expect(t.locks.acquireAll([])).rejects.toThrow(/`resources`/)
        await expect(t.locks.acquireAll(['ok', ''])).rejects.toThrow(/`resource`/)
        await expect(t.locks.acquireAll('x' as unknown as string[])).rejects.toThrow(/`resources`/)
      })

      it('names its resources readably: `resources` as the caller spelled them (distinct, sorted), and messages, errors and telemetry say lock "a", "b", not JSON', async () => {
        n++
        const label = `${acct(1)}", "${acct(2)}`
        const seen: { kind: string; resource: string }[] = []
        const listener = (message: unknown) => void seen.push(message as { kind: string; resource: string })
        subscribe('fencelock:acquire', listener)
        try {
          const lease = await t.locks.acquireAll([acct(2), acct(1)])
          expect(lease.resources).toEqual([acct(1), acct(2)])
          expect(lease.resource).toBe(label)
          const timeout = await t.other.acquireAll([acct(1), acct(2)], { wait: 0 }).then(
            (l) => l,
            (e: unknown) => e,
          )
          expect(timeout).toBeInstanceOf(LockTimeoutError)
          expect((timeout as LockTimeoutError).resource).toBe(label)
          expect((timeout as Error).message).toContain(`lock "${label}"`)
          expect((timeout as Error).message).not.toContain('[')
          await lease.release()
        } finally {
          unsubscribe('fencelock:acquire', listener)
        }
        const multis = seen.filter((m) => m.kind === 'multi')
        expect(multis.length).toBeGreaterThanOrEqual(2)
        for (const m of multis) expect(m.resource).toBe(label)

        const lost = await t.locks
          .withLocks(
            [acct(2), acct(1)],
            async (lease) => {
              await t.client.command('DEL', keysOf(t.prefix, acct(1)).lock)
              await lease.extend().catch(() => {})
            },
            { ttl: 5_000 },
          )
          .then(
            (v) => v,
            (e: unknown) => e,
          )
        expect(lost).toBeInstanceOf(LockLostError)
        expect((lost as Error).message).toMatch(new RegExp(`^Lost lock "${acct(1)}", "${acct(2)}"`))
      })

      it('names with quotes, backslashes and the separator itself are locked exactly', async () => {
        const odd = [`${n}"x", "y`, `${n}z\\`, `${n}w"`]
        const lease = await t.locks.acquireAll(odd)
        expect(lease.resources).toEqual([...odd].sort())
        for (const r of odd) expect((await t.locks.inspect(r)).token).toBe(lease.token)
        expect(await lease.release()).toBe(true)
        for (const r of odd) expect((await t.locks.inspect(r)).held).toBe(false)
      })
    },
    { prefix: 'multi' },
  )
})
