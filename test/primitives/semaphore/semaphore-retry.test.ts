// A semaphore acquire whose reply was lost is retried with the same token (ioredis resends the
// command on its new connection, node-redis fails it and the runtime attempts again with that
// token): the retry gets its own permit back, never a second slot, or a lost reply would leak a
// permit until its ttl and a limit of n would admit fewer than n. Once per client adapter.
import { afterEach, describe, expect, it } from 'vitest'
import { adapters } from '../../../harness/clients.js'
import { until } from '../../../harness/util.js'
import { describeRedis, useClient, useFaultProxy } from '../../../harness/per-adapter.js'

describeRedis('semaphore acquire retried after a lost reply', (server) => {
  const proxy = useFaultProxy(server)

  describe.each(adapters)('$name', (adapter) => {
    const control = useClient(adapter, server, { prefix: 'sem-retry' }) // straight to Redis
    const faulty = useClient(adapter, proxy, { end: 'disconnect' }) // through the proxy
    afterEach(() => proxy.heal())

    it('the retry gets back the permit its lost attempt took: one slot held, and the other of a limit of 2 stays free', async () => {
      const locks = faulty.open({ prefix: control.prefix })
      const pool = control.locks.semaphore('retry', { limit: 2 })
      proxy.drop({ direction: 'down' })
      const acquiring = locks.semaphore('retry', { limit: 2 }).acquire({ ttl: 20_000, wait: 10_000 })
      acquiring.catch(() => {})
      await until('the lost attempt took a permit', async () => (await pool.inspect()).held === 1, { timeout: 3_000 })
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

    describe('with a client of its own', () => {
      // Its own client: the first test's connection reset leaves the shared one's wake-up client reconnecting.
      const fresh = useClient(adapter, proxy, { end: 'disconnect' })

      it('a permit granted to another holder while the reply was lost keeps its fence to itself: the retry gets a fence of its own', async () => {
        // Found by a 10-minute verify run (semaphore, limit 2): after a connection reset two holders
        // were handed the same fence, the retry answered with the semaphore's last fence, which was
        // the other holder's.
        const locks = fresh.open({ prefix: control.prefix })
        const pool = control.locks.semaphore('retry-fence', { limit: 2 })
        proxy.drop({ direction: 'down' })
        const acquiring = locks.semaphore('retry-fence', { limit: 2 }).acquire({ ttl: 20_000, wait: 10_000 })
        acquiring.catch(() => {})
        await until('the lost attempt took a permit', async () => (await pool.inspect()).held === 1, { timeout: 3_000 })
        const other = await pool.tryAcquire()
        expect(other, 'the second permit of a limit of 2').not.toBeNull()
        proxy.heal()
        proxy.resetAll()
        const lease = await acquiring
        expect(lease.fence).not.toBe(other!.fence)
        expect(lease.fence).toBeGreaterThan(other!.fence)
        await Promise.all([lease.release(), other!.release()])
        expect((await pool.inspect()).held).toBe(0)
      })
    })
  })
})
