// All-or-nothing over names on different Redis Cluster slots, with ioredis `Cluster` and node-redis
// `createCluster`: the names are taken one by one in sorted order, and when a later one cannot be
// had (the wait runs out, the signal aborts) every lock already taken is released at once, not
// left to expire at its ttl.
import { describe, expect, it } from 'vitest'
import { LockAbortedError, LockTimeoutError } from '../../../src/index.js'
import { clusterSlot } from '../../../src/util/keys.js'
import { requireRedisOrSkip } from '../../../harness/redis-server.js'
import { clusterAdapters, useClusterLocks } from '../../../harness/cluster-clients.js'
import { useCluster } from '../../../harness/per-adapter.js'

// Far longer than each test: a lock left behind would still be held when the test looks.
const TTL = 20_000

describe.skipIf(!requireRedisOrSkip())('all-or-nothing taken one by one on a Redis Cluster', () => {
  const cluster = useCluster({ masters: 3 })

  describe.each(clusterAdapters)('with $name', (adapter) => {
    const { name } = adapter
    const t = useClusterLocks(adapter, cluster, { ttl: TTL })

    /** Two names on different slots: `first` sorts before `second`, so it is taken first. */
    const names = (test: string) => {
      const [first, second] = [`o:${name}:${test}:a`, `o:${name}:${test}:b`]
      expect(clusterSlot(first)).not.toBe(clusterSlot(second))
      return { first, second }
    }

    it('[a, b] and [b, a] at once: both get through, one after the other (one global order, no deadlock)', async () => {
      const { first, second } = names('order')
      const order: string[] = []
      const take = (who: string, resources: string[]) =>
        t.locks.withLocks(
          resources,
          async (lease) => {
            expect(lease.resources).toEqual([first, second])
            order.push(`${who} in`)
            await new Promise((resolve) => setTimeout(resolve, 100))
            order.push(`${who} out`)
          },
          { wait: 3_000 },
        )
      await Promise.all([take('x', [first, second]), take('y', [second, first])])
      expect([order.slice(0, 2), order.slice(2)]).toEqual([
        [order[0], order[0]!.replace('in', 'out')],
        [order[2], order[2]!.replace('in', 'out')],
      ])
    })

    it('the wait for the second name runs out: LockTimeoutError, and the first is free at once', async () => {
      const { first, second } = names('timeout')
      const holder = await t.other.acquire(second)
      await expect(t.locks.acquireAll([second, first], { wait: 300 })).rejects.toBeInstanceOf(LockTimeoutError)
      expect((await t.other.inspect(first)).held).toBe(false)
      const next = await t.other.tryAcquire(first)
      expect(next).not.toBeNull()
      await Promise.all([next!.release(), holder.release()])
    })

    it('the signal aborts while waiting for the second name: the first is free at once', async () => {
      const { first, second } = names('abort')
      const holder = await t.other.acquire(second)
      const controller = new AbortController()
      const acquiring = t.locks.acquireAll([first, second], { wait: 10_000, signal: controller.signal })
      await expect.poll(async () => (await t.other.inspect(first)).held, { timeout: 3_000 }).toBe(true)
      controller.abort()
      await expect(acquiring).rejects.toBeInstanceOf(LockAbortedError)
      expect((await t.other.inspect(first)).held).toBe(false)
      await holder.release()
    })
  })
})
