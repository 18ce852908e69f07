// Semaphore FIFO, once per client adapter: a freed permit goes to the waiter queued ahead, even
// when that waiter is slow to come for it; a newcomer's tryAcquire, or the first attempt of its
// acquire, does not overtake it. The waiter ahead sits behind a hung fault proxy, so it cannot
// react to the wake-up and only the queue can keep its turn.
import { afterEach, describe, expect, it } from 'vitest'
import type { Lease } from '../../../src/index.js'
import { adapters } from '../../../harness/clients.js'
import { scriptCalls } from '../../../harness/commandstats.js'
import { until } from '../../../harness/util.js'
import { describeRedis, useClient, useFaultProxy } from '../../../harness/per-adapter.js'

// Long enough that the waiter ahead keeps its place while its proxy hangs.
const OPTIONS = { waiterGrace: 5_000, ttl: 10_000 }

describeRedis('semaphore FIFO', (server) => {
  const proxy = useFaultProxy(server)

  describe.each(adapters)('$name', (adapter) => {
    const t = useClient(adapter, server, { prefix: 'sem-fifo', locks: OPTIONS })
    const slow = useClient(adapter, proxy, { end: 'disconnect' }) // through the proxy
    afterEach(() => proxy.heal())

    it("a permit freed while a waiter is queued goes to that waiter: a newcomer's tryAcquire and first acquire attempt are refused", async () => {
      const ahead = slow.open({ prefix: t.prefix, ...OPTIONS })
      const pool = t.locks.semaphore('fifo', { limit: 1 })
      const holder = await pool.acquire()
      const first = ahead.semaphore('fifo', { limit: 1 }).acquire({ wait: 15_000 })
      await until('the first waiter is in line', async () => (await pool.inspect()).waiters === 1, { timeout: 3_000 })
      proxy.hang()
      expect(await holder.release()).toBe(true)
      expect((await pool.inspect()).held).toBe(0)
      // A free permit, one waiter ahead: the newcomer's single attempt must not take it.
      expect(await pool.tryAcquire()).toBeNull()
      const order: string[] = []
      await server.redis.cli('CONFIG', 'RESETSTAT')
      const second = pool.acquire({ wait: 15_000 }).then((lease) => (order.push('second'), lease))
      // Its first attempt puts it in line, and once its wake-up channel is active it looks once more;
      // after both were refused it waits for a wake-up or its re-check (the first waiter's 5 s grace).
      await until('the newcomer looked twice', async () => (await scriptCalls(server.redis)) >= 2, { timeout: 3_000 })
      expect(await t.client.command('ZCARD', `${t.prefix}{fifo}:S:Q`), 'the newcomer waits behind the first waiter').toBe(2)
      expect((await pool.inspect()).held).toBe(0)
      expect(order).toEqual([])
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
