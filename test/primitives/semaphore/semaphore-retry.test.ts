// A semaphore acquire whose reply was lost is retried with the same token (ioredis resends the
// command on its new connection, node-redis fails it and the runtime attempts again with that
// token): the retry gets its own permit back, never a second slot, or a lost reply would leak a
// permit until its ttl and a limit of n would admit fewer than n. Once per client adapter.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type Locks } from '../../../src/index.js'
import { adapters, type TestClient } from '../../../harness/clients.js'
import { startFaultProxy, type FaultProxy } from '../../../harness/fault-proxy.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../../harness/redis-server.js'
import { closeQuietly, uniquePrefix, waitUntil } from '../../../harness/util.js'

describe.skipIf(!requireRedisOrSkip())('semaphore acquire retried after a lost reply', () => {
  let redis: RedisProcess
  let proxy: FaultProxy
  beforeAll(async () => {
    redis = await startRedis()
    proxy = await startFaultProxy(redis)
  })
  afterAll(async () => {
    await proxy?.close()
    await redis?.stop()
  })

  describe.each(adapters)('$name', (adapter) => {
    let control: TestClient // straight to Redis
    let faulty: TestClient // through the proxy
    let direct: Locks
    let locks: Locks
    beforeAll(async () => {
      control = await adapter.connect(redis.url)
    })
    afterEach(async () => {
      proxy.heal()
      await closeQuietly([locks, direct])
      await faulty?.disconnect()
    })
    afterAll(() => control?.quit())

    it('the retry gets back the permit its lost attempt took: one slot held, and the other of a limit of 2 stays free', async () => {
      const prefix = uniquePrefix('sem-retry')
      faulty = await adapter.connect(proxy.url)
      locks = createLocks({ redis: faulty.raw, prefix })
      direct = createLocks({ redis: control.raw, prefix })
      const pool = direct.semaphore('retry', { limit: 2 })
      proxy.drop({ direction: 'down' })
      const acquiring = locks.semaphore('retry', { limit: 2 }).acquire({ ttl: 20_000, wait: 10_000 })
      acquiring.catch(() => {})
      await waitUntil('the lost attempt took a permit', async () => (await pool.inspect()).held === 1, 3_000)
      proxy.heal()
      proxy.resetAll()
      const lease = await acquiring
      const info = await pool.inspect()
      expect(info.permits.map((p) => p.token)).toEqual([lease.token])
      expect(info.held).toBe(1)
      const second = await pool.tryAcquire()
      expect(second, 'a limit of 2 admits a second holder').not.toBeNull()
      expect(second!.fence).toBeGreaterThan(lease.fence)
      await Promise.all([lease.release(), second!.release()])
      expect((await pool.inspect()).held).toBe(0)
    })
  })
})
