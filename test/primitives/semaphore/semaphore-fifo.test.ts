// Semaphore FIFO, once per client adapter: a freed permit goes to the waiter queued ahead, even
// when that waiter is slow to come for it; a newcomer's tryAcquire, or the first attempt of its
// acquire, does not overtake it. The waiter ahead sits behind a hung fault proxy, so it cannot
// react to the wake-up and only the queue can keep its turn.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type Lease, type Locks } from '../../../src/index.js'
import { adapters, type TestClient } from '../../../harness/clients.js'
import { startFaultProxy, type FaultProxy } from '../../../harness/fault-proxy.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../../harness/redis-server.js'
import { closeQuietly, sleep, uniquePrefix, waitUntil } from '../../../harness/util.js'

// Long enough that the waiter ahead keeps its place while its proxy hangs.
const OPTIONS = { waiterGrace: 5_000, ttl: 10_000 }

describe.skipIf(!requireRedisOrSkip())('semaphore FIFO', () => {
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
    let client: TestClient
    let slow: TestClient // through the proxy
    let locks: Locks
    let ahead: Locks
    let prefix: string
    beforeAll(async () => {
      client = await adapter.connect(redis.url)
    })
    afterEach(async () => {
      proxy.heal()
      await closeQuietly([locks, ahead])
      await slow?.disconnect()
    })
    afterAll(() => client?.quit())

    const setup = async (name: string) => {
      prefix = uniquePrefix(name)
      slow = await adapter.connect(proxy.url)
      locks = createLocks({ redis: client.raw, prefix, ...OPTIONS })
      ahead = createLocks({ redis: slow.raw, prefix, ...OPTIONS })
    }

    it("a permit freed while a waiter is queued goes to that waiter: a newcomer's tryAcquire and first acquire attempt are refused", async () => {
      await setup('sem-fifo')
      const pool = locks.semaphore('fifo', { limit: 1 })
      const holder = await pool.acquire()
      const first = ahead.semaphore('fifo', { limit: 1 }).acquire({ wait: 15_000 })
      await waitUntil('the first waiter is in line', async () => (await pool.inspect()).waiters === 1, 3_000)
      proxy.hang()
      expect(await holder.release()).toBe(true)
      expect((await pool.inspect()).held).toBe(0)
      // A free permit, one waiter ahead: the newcomer's single attempt must not take it.
      expect(await pool.tryAcquire()).toBeNull()
      const order: string[] = []
      const second = pool.acquire({ wait: 15_000 }).then((lease) => (order.push('second'), lease))
      await waitUntil('the newcomer waits behind the first waiter', async () => (await pool.inspect()).waiters === 2, 3_000)
      await sleep(100)
      expect(order).toEqual([])
      expect((await pool.inspect()).held).toBe(0)
      proxy.heal()
      const firstLease: Lease = await first.then((lease) => (order.push('first'), lease))
      expect(order).toEqual(['first'])
      expect((await pool.inspect()).permits.map((p) => p.token)).toEqual([firstLease.token])
      await firstLease.release()
      const secondLease = await second
      expect(order).toEqual(['first', 'second'])
      expect(secondLease.fence).toBeGreaterThan(firstLease.fence)
      await secondLease.release()
    })
  })
})
