// A read acquisition whose reply was lost is retried with the same token (ioredis resends the
// command on its new connection, node-redis fails it and the runtime attempts again with that
// token): the retry gets its read lease back, and a reader granted in between keeps its fence to
// itself. Readers share the lock, so the lock's last fence may be another reader's. Once per
// client adapter.
import { afterEach, describe, expect, it } from 'vitest'
import { adapters } from '../../../harness/clients.js'
import { until } from '../../../harness/util.js'
import { describeRedis, useClient, useFaultProxy } from '../../../harness/per-adapter.js'

describeRedis('read/write lock: a read retried after a lost reply', (server) => {
  const proxy = useFaultProxy(server)

  describe.each(adapters)('$name', (adapter) => {
    const control = useClient(adapter, server, { prefix: 'rw-retry' }) // straight to Redis
    const faulty = useClient(adapter, proxy, { end: 'disconnect' }) // through the proxy
    afterEach(() => proxy.heal())

    it('a reader granted while the reply was lost keeps its fence to itself: the retry gets a fence of its own', async () => {
      const locks = faulty.open({ prefix: control.prefix })
      const table = control.locks.readWrite('table')
      proxy.drop({ direction: 'down' })
      const reading = locks.readWrite('table').read({ ttl: 20_000, wait: 10_000 })
      reading.catch(() => {})
      await until('the lost attempt took a read lease', async () => (await table.inspect()).readers.length === 1, { timeout: 3_000 })
      const other = await table.tryRead()
      expect(other, 'readers share the lock').not.toBeNull()
      proxy.heal()
      proxy.resetAll()
      const lease = await reading
      expect(lease.fence).not.toBe(other!.fence)
      expect(lease.fence).toBeGreaterThan(other!.fence)
      expect((await table.inspect()).readers.map((r) => r.token).sort()).toEqual([lease.token, other!.token].sort())
      await Promise.all([lease.release(), other!.release()])
      expect((await table.inspect()).readers).toEqual([])
    })
  })
})
