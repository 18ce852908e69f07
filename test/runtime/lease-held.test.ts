// lease.held reads the clock itself: past the deadline it is false even when the expiry timer has
// not run yet (a busy event loop delays timers, not the monotonic clock). Code that checks `held`
// right after a long synchronous stretch must not be told it still holds the lock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type Locks } from '../../src/index.js'
import { adapters, type TestClient } from '../../harness/clients.js'
import { startFaultProxy, type FaultProxy } from '../../harness/fault-proxy.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'

/** Blocks the event loop (no timer can run) for `ms` milliseconds of monotonic time. */
function busy(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until) {
    // spin
  }
}

describe.skipIf(!requireRedisOrSkip())('lease.held and the deadline', () => {
  let server: RedisProcess
  let proxy: FaultProxy

  beforeAll(async () => {
    server = await startRedis()
    proxy = await startFaultProxy({ host: server.host, port: server.port })
  })
  afterAll(async () => {
    await proxy?.close()
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

  describe.each(adapters)('$name, replies delayed by 250 ms', (adapter) => {
    let client: TestClient
    let locks: Locks

    beforeAll(async () => {
      client = await adapter.connect(proxy.url)
      locks = createLocks({ redis: client.raw, prefix: `late:${adapter.name}:` })
    })
    afterAll(async () => {
      proxy.setDelay(0)
      await locks?.close()
      await client?.disconnect()
    })

    it('the deadline counts from before the request was sent, not from the reply', async () => {
      const ttl = 2_000
      const drift = Math.floor(ttl * 0.01) + 2
      proxy.setDelay(250, { direction: 'down' })
      const before = performance.now()
      const lease = (await locks.tryAcquire('r', { ttl }))!
      proxy.setDelay(0)
      expect(lease).not.toBeNull()
      expect(performance.now() - before).toBeGreaterThan(240)
      // Counted from the reply it would end about 250 ms later than this.
      expect(lease.deadline).toBeLessThanOrEqual(before + ttl - drift + 50)
      expect(lease.deadline).toBeGreaterThanOrEqual(before + ttl - drift)
      await lease.release()
    })
  })
})
