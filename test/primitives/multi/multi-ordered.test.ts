// All-or-nothing over names on different Redis Cluster slots, with ioredis `Cluster` and node-redis
// `createCluster`: the names are taken one by one in sorted order, and when a later one cannot be
// had (the wait runs out, the signal aborts) every lock already taken is released at once, not
// left to expire at its ttl.
import v8 from 'node:v8'
import vm from 'node:vm'
import { describe, expect, it } from 'vitest'
import { LockAbortedError, LockTimeoutError, type Locks } from '../../../src/index.js'
import { clusterSlot } from '../../../src/util/keys.js'
import { requireRedisOrSkip } from '../../../harness/redis-server.js'
import { until } from '../../../harness/util.js'
import { clusterAdapters, useClusterLocks } from '../../../harness/cluster-clients.js'
import { useCluster } from '../../../harness/per-adapter.js'

/** A full garbage collection (the flag set at run time: the test process is not started with it). */
v8.setFlagsFromString('--expose-gc')
const gc = vm.runInNewContext('gc') as () => void

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
      const take = (who: string, locks: Locks, resources: string[]) =>
        locks.withLocks(
          resources,
          async (lease) => {
            expect(lease.resources).toEqual([first, second])
            order.push(`${who} in`)
            // The first one in stays until the other waits in line for the first name (both take
            // it first): the other is kept out while it is inside, not merely late.
            if (order.length === 1)
              await until('the other waits for the first name', async () => (await t.other.inspect(first)).waiters === 1, { timeout: 3_000 })
            order.push(`${who} out`)
          },
          { wait: 3_000 },
        )
      await Promise.all([take('x', t.locks, [first, second]), take('y', t.other, [second, first])])
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
      // Waiting for the second name: it holds the first and stands in the second's line (holding the
      // first alone is not enough: its acquire may not have settled, and an abort then undoes it later).
      await until(
        'it holds the first and waits for the second',
        async () => (await t.other.inspect(first)).held && (await t.other.inspect(second)).waiters === 1,
        {
          timeout: 3_000,
        },
      )
      controller.abort()
      await expect(acquiring).rejects.toBeInstanceOf(LockAbortedError)
      expect((await t.other.inspect(first)).held).toBe(false)
      await holder.release()
    })

    it('lets a released lease go when its signal was listened to: nothing keeps the leases alive', async () => {
      const { first, second } = names('memory')
      const released: WeakRef<object>[] = []
      for (let i = 0; i < 20; i++) {
        const lease = await t.locks.acquireAll([first, second])
        // What an application does: work that stops when the lease is lost, the lease in its closure.
        lease.signal.addEventListener('abort', () => void lease.resources)
        released.push(new WeakRef(lease))
        await lease.release()
      }
      // A signal made by AbortSignal.any stays reachable while it has a listener and has not
      // aborted (a released lease's never does): each lease, its parts and their LeaseStates leaked.
      await until('the released leases were collected', () => {
        gc()
        return released.every((ref) => ref.deref() === undefined)
      })
    })
  })
})
