// All-or-nothing over names on different Redis Cluster slots, with ioredis `Cluster` and node-redis
// `createCluster`: the names are taken one by one in sorted order, and when a later one cannot be
// had (the wait runs out, the signal aborts) every lock already taken is released at once, not
// left to expire at its ttl.
import { Cluster } from 'ioredis'
import { createCluster } from 'redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, LockAbortedError, LockTimeoutError, type Locks, type RedisClient } from '../../../src/index.js'
import { clusterSlot } from '../../../src/util/keys.js'
import { requireRedisOrSkip, startCluster, type RedisCluster } from '../../../harness/redis-server.js'

interface Client {
  raw: RedisClient
  close(): Promise<void>
}

const adapters: { name: string; connect(cluster: RedisCluster): Promise<Client> }[] = [
  {
    name: 'ioredis',
    async connect(cluster) {
      const client = new Cluster([{ host: '127.0.0.1', port: cluster.nodes[0]!.port }])
      client.on('error', () => {})
      await new Promise<void>((resolve, reject) => {
        client.once('ready', resolve)
        client.once('end', () => reject(new Error('cluster client ended')))
      })
      return { raw: client, close: async () => client.disconnect() }
    },
  },
  {
    name: 'node-redis',
    async connect(cluster) {
      const client = createCluster({ rootNodes: [{ url: cluster.nodes[0]!.url }] })
      client.on('error', () => {})
      await client.connect()
      return { raw: client, close: async () => void client.destroy() }
    },
  },
]

// Far longer than each test: a lock left behind would still be held when the test looks.
const TTL = 20_000

describe.skipIf(!requireRedisOrSkip())('all-or-nothing taken one by one on a Redis Cluster', () => {
  let cluster: RedisCluster
  beforeAll(async () => {
    cluster = await startCluster({ masters: 3 })
  })
  afterAll(async () => {
    await cluster?.stop()
  })

  describe.each(adapters)('with $name', ({ name, connect }) => {
    const clients: Client[] = []
    let locks: Locks
    let other: Locks
    beforeAll(async () => {
      clients.push(await connect(cluster), await connect(cluster))
      locks = createLocks({ redis: clients[0]!.raw, ttl: TTL })
      other = createLocks({ redis: clients[1]!.raw, ttl: TTL })
    })
    afterAll(async () => {
      await locks?.close()
      await other?.close()
      for (const c of clients) await c.close()
    })

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
        locks.withLocks(
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
      const holder = await other.acquire(second)
      await expect(locks.acquireAll([second, first], { wait: 300 })).rejects.toBeInstanceOf(LockTimeoutError)
      expect((await other.inspect(first)).held).toBe(false)
      const next = await other.tryAcquire(first)
      expect(next).not.toBeNull()
      await Promise.all([next!.release(), holder.release()])
    })

    it('the signal aborts while waiting for the second name: the first is free at once', async () => {
      const { first, second } = names('abort')
      const holder = await other.acquire(second)
      const controller = new AbortController()
      const acquiring = locks.acquireAll([first, second], { wait: 10_000, signal: controller.signal })
      await expect.poll(async () => (await other.inspect(first)).held, { timeout: 3_000 }).toBe(true)
      controller.abort()
      await expect(acquiring).rejects.toBeInstanceOf(LockAbortedError)
      expect((await other.inspect(first)).held).toBe(false)
      await holder.release()
    })
  })
})
