// A lost lease never passes silently (issue 10, items 1 and 6): `await using` and withLock report a
// lease lost before their block ended; close() can release what the instance holds, and a release
// after a plain close() tells the truth.
import { expect, it } from 'vitest'
import { createLocks, LockLostError } from '../../src/index.js'
import { keysOf, until } from '../../harness/util.js'
import { describeRedis, perAdapter } from '../../harness/per-adapter.js'

describeRedis('lost leases are never silent', (server) => {
  perAdapter(
    server,
    (t) => {
      const lockKey = (resource: string) => keysOf(t.prefix, resource).lock

      it('`await using`: a block that outlives its lease throws LockLostError at its end', async () => {
        const run = async () => {
          await using lease = await t.locks.acquire('using-expired', { ttl: 150 })
          // The block outlives its lease: it runs on until the lease is lost (its ttl runs out).
          await until('the lease is lost', () => lease.signal.aborted, { timeout: 3_000 })
          return lease.fence
        }
        const err = await run().then(
          () => 'returned normally',
          (e: unknown) => e,
        )
        expect(err).toBeInstanceOf(LockLostError)
        expect((err as LockLostError).reason).toBe('expired')
      })

      it('`await using`: a block that ends in time releases quietly', async () => {
        const run = async () => {
          await using lease = await t.locks.acquire('using-ok', { ttl: 5_000 })
          return lease.fence
        }
        expect(await run()).toBeGreaterThan(0)
        expect(await t.client.command('EXISTS', lockKey('using-ok'))).toBe(0)
      })

      it('`await using`: past the deadline before its expiry timer could run (event loop blocked), dispose still reports the loss', async () => {
        const run = async () => {
          await using lease = await t.locks.acquire('using-blocked', { ttl: 150 })
          const blockedUntil = performance.now() + 250
          while (performance.now() < blockedUntil) {
            // a long synchronous computation: no timer runs
          }
          return lease.fence
        }
        const err = await run().then(
          () => 'returned normally',
          (e: unknown) => e,
        )
        expect(err).toBeInstanceOf(LockLostError)
      })

      it('`await using`: a lease released by hand in the block is not reported again', async () => {
        const run = async () => {
          await using lease = await t.locks.acquire('using-manual', { ttl: 5_000 })
          return lease.release()
        }
        expect(await run()).toBe(true)
      })

      it('withLock: fn that finishes after its lease was lost (renewal refused) rejects with LockLostError instead of returning its value', async () => {
        const err = await t.locks
          .withLock(
            'with-lost',
            async (lease) => {
              // Someone removes the lock behind the holder's back; the next renewal (at ttl/3) is refused.
              await t.client.command('DEL', lockKey('with-lost'))
              await until('the renewal was refused', () => lease.signal.aborted, { timeout: 3_000 })
              return 'value computed without the lock'
            },
            { ttl: 300 },
          )
          .then(
            (v) => v,
            (e: unknown) => e,
          )
        expect(err).toBeInstanceOf(LockLostError)
        expect((err as LockLostError).reason).toBe('refused')
      })

      it('close({ release: true }) releases every lease the instance holds; their signals abort with reason "closed"', async () => {
        const own = createLocks({ redis: t.client.raw, prefix: t.prefix })
        const a = await own.acquire('close-a', { ttl: 30_000 })
        const b = await own.acquire('close-b', { ttl: 30_000, autoExtend: true })
        await own.close({ release: true })
        expect(await t.client.command('EXISTS', lockKey('close-a'), lockKey('close-b'))).toBe(0)
        for (const lease of [a, b]) {
          expect(lease.signal.aborted).toBe(true)
          expect((lease.signal.reason as LockLostError).reason).toBe('closed')
          expect(await lease.release()).toBe(false) // already released by close
        }
      })

      it('after a plain close(), lease.release() still releases the lock in Redis and says so', async () => {
        const own = createLocks({ redis: t.client.raw, prefix: t.prefix })
        const lease = await own.acquire('close-plain', { ttl: 30_000 })
        await own.close()
        expect(await t.client.command('EXISTS', lockKey('close-plain'))).toBe(1) // left for its ttl
        expect(lease.held).toBe(false)
        expect(await lease.release()).toBe(true)
        expect(await t.client.command('EXISTS', lockKey('close-plain'))).toBe(0)
        expect(await lease.release()).toBe(false)
      })
    },
    { prefix: 'lost' },
  )
})
