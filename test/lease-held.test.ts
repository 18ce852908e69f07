// lease.held reads the clock itself: past the deadline it is false even when the expiry timer has
// not run yet (a busy event loop delays timers, not the monotonic clock). Code that checks `held`
// right after a long synchronous stretch must not be told it still holds the lock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type Locks } from '../src/index.js'
import { adapters, type TestClient } from './support/clients.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from './support/redis-server.js'

/** Blocks the event loop (no timer can run) for `ms` milliseconds of monotonic time. */
function busy(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until) {
    // spin
  }
}

describe.skipIf(!requireRedisOrSkip())('lease.held and the deadline', () => {
  let server: RedisProcess

  beforeAll(async () => {
    server = await startRedis()
  })
  afterAll(async () => {
    await server?.stop()
  })

  describe.each(adapters)('$name', (adapter) => {
    let client: TestClient
    let locks: Locks

    beforeAll(async () => {
      client = await adapter.connect(server.url)
      locks = createLocks({ redis: client.raw, prefix: `held:${adapter.name}:` })
    })
    afterAll(async () => {
      await locks?.close()
      await client?.disconnect()
    })

    it('is false once the deadline passed, before the expiry timer ran', async () => {
      const lease = await locks.acquire('r', { ttl: 100 })
      expect(lease.held).toBe(true)
      busy(lease.deadline - performance.now() + 20)
      // Still inside the same macrotask: the expiry timer cannot have fired.
      expect(lease.signal.aborted).toBe(false)
      expect(performance.now()).toBeGreaterThan(lease.deadline)
      expect(lease.held).toBe(false)
      expect(lease.remaining).toBe(0)
      // Once timers run, the signal says the same.
      await new Promise((r) => setTimeout(r, 0))
      expect(lease.signal.aborted).toBe(true)
      await lease.release()
    })

    it('is true inside the deadline and false after release', async () => {
      const lease = await locks.acquire('r2', { ttl: 5_000 })
      busy(50)
      expect(lease.held).toBe(true)
      await lease.release()
      expect(lease.held).toBe(false)
    })
  })
})
