// lease.held reads the clock itself: past the deadline it is false even when the expiry timer has
// not run yet (a busy event loop delays timers, not the monotonic clock). Code that checks `held`
// right after a long synchronous stretch must not be told it still holds the lock.
import { afterAll, expect, it } from 'vitest'
import type { LockLostError } from '../../src/index.js'
import { describeRedis, perAdapter, useFaultProxy } from '../../harness/per-adapter.js'
import { until } from '../../harness/util.js'

/** Blocks the event loop (no timer can run) for `ms` milliseconds of monotonic time. */
function busy(ms: number): void {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // spin
  }
}

describeRedis('lease.held and the deadline', (server) => {
  const proxy = useFaultProxy(server)

  perAdapter(
    server,
    (t) => {
      it('is false once the deadline passed, before the expiry timer ran', async () => {
        const lease = await t.locks.acquire('r', { ttl: 100 })
        expect(lease.held).toBe(true)
        busy(lease.deadline - performance.now() + 20)
        // Still inside the same macrotask: the expiry timer cannot have fired.
        expect(lease.signal.aborted).toBe(false)
        // The premise: the busy loop ran past the deadline on the monotonic clock.
        expect(performance.now()).toBeGreaterThan(lease.deadline)
        expect(lease.held).toBe(false)
        expect(lease.remaining).toBe(0)
        // Once timers run, the signal says the same.
        await until('the expiry timer ran', () => lease.signal.aborted)
        expect((lease.signal.reason as LockLostError).reason).toBe('expired')
        // No release: the lease is over and its key expires at its ttl. A release now would wait
        // for its reply at most the ttl (100 ms), which a loaded machine can exceed (RedisError).
      })

      it('is true inside the deadline and false after release', async () => {
        const lease = await t.locks.acquire('r2', { ttl: 5_000 })
        busy(50)
        expect(lease.held).toBe(true)
        await lease.release()
        expect(lease.held).toBe(false)
      })
    },
    { prefix: 'held', end: 'disconnect' },
  )

  perAdapter(
    proxy,
    (t) => {
      afterAll(() => proxy.setDelay(0))

      it('the deadline counts from before the request was sent, not from the reply', async () => {
        const ttl = 2_000
        const drift = Math.floor(ttl * 0.01) + 2
        proxy.setDelay(250, { direction: 'down' })
        const before = performance.now()
        const lease = (await t.locks.tryAcquire('r', { ttl }))!
        proxy.setDelay(0)
        expect(lease).not.toBeNull()
        // The premise: the reply really came 250 ms late (the proxy's promise; a lower bound).
        expect(performance.now() - before).toBeGreaterThan(240)
        // Counted from the reply it would end about 250 ms later than this.
        expect(lease.deadline).toBeLessThanOrEqual(before + ttl - drift + 50)
        expect(lease.deadline).toBeGreaterThanOrEqual(before + ttl - drift)
        await lease.release()
      })
    },
    { title: '$name, replies delayed by 250 ms', prefix: 'late', end: 'disconnect' },
  )
})
