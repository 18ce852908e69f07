// The uncontended path's mechanisms on a real redis-server: a lease whose signal nobody read still
// reports its loss when the signal is read later; a thousand held leases arm no Node timer each;
// and the acquire event tells how many attempts went to Redis and whether the first found the lock
// taken, for acquire and tryAcquire alike.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { expect, it } from 'vitest'
import { LockLostError } from '../../src/index.js'
import { mutexKeys } from '../../src/primitives/mutex/mutex.js'
import { record } from '../../harness/telemetry.js'
import { until } from '../../harness/util.js'
import { describeRedis, perAdapter } from '../../harness/per-adapter.js'

const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length

describeRedis('hot path', (server) => {
  perAdapter(
    server,
    (t) => {
      it('a signal first read after the lease was lost is already aborted, with the reason', async () => {
        const losses = record('fencelock:lost')
        const expired = await t.locks.acquire('expires', { ttl: 150 })
        try {
          // The loss is reported (its expiry timer ran) while nobody has read the signal.
          await until('the lease was lost', () => losses.events.some((e) => e.token === expired.token))
        } finally {
          losses.stop()
        }
        expect(losses.events.filter((e) => e.token === expired.token).map((e) => e.reason)).toEqual(['expired'])
        expect(expired.held).toBe(false)
        expect(expired.signal.aborted).toBe(true)
        expect((expired.signal.reason as LockLostError).reason).toBe('expired')

        const refused = await t.locks.acquire('refused', { ttl: 5_000 })
        await t.client.command('DEL', mutexKeys(t.prefix, 'refused').lock)
        await expect(refused.extend()).rejects.toBeInstanceOf(LockLostError)
        expect((refused.signal.reason as LockLostError).reason).toBe('refused')
      })

      it('holds a thousand leases on one timer, not one each, and lets it go once they are released', async () => {
        const before = timers()
        const leases = await Promise.all(Array.from({ length: 1_000 }, (_, i) => t.locks.acquire(`many${i}`, { ttl: 10_000, autoExtend: i % 2 === 0 })))
        expect(timers() - before).toBeLessThanOrEqual(1)
        expect(leases.every((l) => l.held)).toBe(true)
        await Promise.all(leases.map((l) => l.release()))
        expect(timers()).toBeLessThanOrEqual(before)
      })

      it('the acquire event counts the attempts sent to Redis and says whether the first found the lock taken', async () => {
        const seen: Record<string, unknown>[] = []
        const starts: Record<string, unknown>[] = []
        const onEnd = (message: unknown) => void seen.push(message as Record<string, unknown>)
        const onStart = (message: unknown) => void starts.push(message as Record<string, unknown>)
        subscribe('fencelock:acquire', onEnd)
        subscribe('fencelock:acquire:start', onStart)
        try {
          const free = await t.locks.acquire('tel', { ttl: 1_000 })
          const busy = await t.locks.tryAcquire('tel')
          expect(busy).toBeNull()
          // Released once the waiter is in line: its first attempt found it taken, a later one gets it.
          const waiting = t.locks.acquire('tel', { ttl: 1_000, wait: 5_000 })
          await until('the waiter is in line', async () => (await t.locks.inspect('tel')).waiters === 1)
          await free.release()
          const waited = await waiting
          const tried = await t.locks.tryAcquire('tel2')
          await waited.release()
          await tried!.release()

          const of = (resource: string) => seen.filter((m) => m.resource === resource)
          expect(of('tel')).toEqual([
            expect.objectContaining({ kind: 'mutex', outcome: 'acquired', token: free.token, attempts: 1, contended: false }),
            expect.objectContaining({ kind: 'mutex', outcome: 'busy', attempts: 1, contended: true, waitedMs: expect.any(Number) }),
            expect.objectContaining({ kind: 'mutex', outcome: 'acquired', token: waited.token, contended: true }),
          ])
          expect(of('tel')[2]!.attempts).toBeGreaterThanOrEqual(2)
          expect(of('tel2')).toEqual([
            expect.objectContaining({ outcome: 'acquired', token: tried!.token, fence: tried!.fence, attempts: 1, contended: false }),
          ])
          expect(starts.filter((m) => m.resource === 'tel2')).toEqual([{ kind: 'mutex', resource: 'tel2', ttl: undefined, wait: 0 }])
        } finally {
          unsubscribe('fencelock:acquire', onEnd)
          unsubscribe('fencelock:acquire:start', onStart)
        }
      })
    },
    { prefix: 'hot-path' },
  )
})
