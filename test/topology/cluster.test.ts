// Redis Cluster with ioredis `Cluster` and node-redis `createCluster`, on a real 3-master cluster:
// every key of a resource in one slot, waiting across the cluster, and locks that keep working
// while the resource's slot migrates (ASK and TRYAGAIN during the move, MOVED after it).
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { createLocks, InvalidArgumentError, type Lease } from '../../src/index.js'
import { clusterSlot } from '../../src/util/keys.js'
import { requireRedisOrSkip, type RedisProcess } from '../../harness/redis-server.js'
import { clusterAdapters, useClusterLocks } from '../../harness/cluster-clients.js'
import { useCluster } from '../../harness/per-adapter.js'
import { recordAcquires } from '../../harness/telemetry.js'
import { sleep, until } from '../../harness/until.js'
import { tokenIn } from '../../harness/util.js'

/** Redis Cluster's key slot of a hash tag: the library's own (checked against CLUSTER KEYSLOT below). */
const slotOfTag = (tag: string): number => clusterSlot(tag)

/** A resource name other than `resource` whose keys land in the same slot. */
function sameSlotAs(resource: string): string {
  const slot = slotOfTag(resource)
  for (let i = 0; ; i++) if (slotOfTag(`${resource}-${i}`) === slot) return `${resource}-${i}`
}

describe.skipIf(!requireRedisOrSkip())('Redis Cluster', () => {
  const cluster = useCluster({ masters: 3 })

  describe.each(clusterAdapters)('with $name', (adapter) => {
    const { name } = adapter
    const t = useClusterLocks(adapter, cluster, { ttl: 2_000 })

    const owner = async (resource: string): Promise<RedisProcess> => cluster.nodeForSlot(slotOfTag(resource))
    /** `node` stores the lease's token in the lock key and its fence in the fence key. */
    const expectStoredOn = async (node: RedisProcess, resource: string, lease: Lease) => {
      expect(tokenIn(await node.cli('GET', `fencelock:{${resource}}:L`))).toBe(lease.token)
      expect(Number(await node.cli('GET', `fencelock:{${resource}}:F`))).toBe(lease.fence)
    }
    /** The lease keeps the other client out, extends, releases, and the other client gets a larger fence. */
    const expectHandsOver = async (resource: string, lease: Lease) => {
      expect(await t.other.tryAcquire(resource)).toBeNull()
      await lease.extend(2_000)
      expect(await lease.release()).toBe(true)
      const next = await t.other.acquire(resource)
      expect(next.fence).toBeGreaterThan(lease.fence)
      await next.release()
    }

    it('keeps every key of a resource on the node that owns its slot', async () => {
      const resource = `c:${name}:basic`
      expect(await cluster.slotOf(`fencelock:{${resource}}:L`)).toBe(slotOfTag(resource))
      const lease = await t.locks.acquire(resource)
      await expectStoredOn(await owner(resource), resource, lease)
      expect(await t.other.inspect(resource)).toMatchObject({ held: true, token: lease.token, fence: lease.fence })
      await expectHandsOver(resource, lease)
    })

    it('wakes a waiter on another client through cluster pub/sub', async () => {
      const resource = `c:${name}:wake`
      const acquires = recordAcquires()
      // Counted on a connection of its own: a redis-cli process per look could outlast the lease.
      const direct = new Redis((await owner(resource)).url)
      const scriptCalls = async () => {
        const info = await direct.info('commandstats')
        return ['evalsha', 'eval'].reduce((sum, command) => sum + Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0), 0)
      }
      try {
        const holder = await t.locks.acquire(resource)
        await direct.config('RESETSTAT')
        const waiting = t.other.acquire(resource, { wait: 3_000 })
        // A fresh waiter sends its first attempt, subscribes, and looks once more when the
        // subscription is active (a release in between would have gone unheard): both attempts
        // must be done before the release, or the second one could take the lock instead.
        await until('the waiter made its two attempts', async () => (await scriptCalls()) >= 2)
        expect(holder.held).toBe(true)
        await holder.release()
        const lease = await waiting
        // The holder had ~1.8 s left: the waiter went out again because the release's message
        // named it, not because its re-check timer ran out.
        const wakes = acquires.wakes(resource)
        expect(wakes).toContain('release')
        expect(wakes).not.toContain('recheck')
        expect(lease.fence).toBeGreaterThan(holder.fence)
        await lease.release()
      } finally {
        acquires.stop()
        direct.disconnect()
      }
    })

    it('13. keeps working after the slot moved (MOVED): the lock and its fence moved together', async () => {
      const resource = `c:${name}:moved`
      const lease = await t.locks.acquire(resource, { ttl: 10_000 })
      const slot = slotOfTag(resource)
      const from = await owner(resource)
      const to = cluster.nodes.find((n) => n !== from)!
      await cluster.migrateSlot(slot, to)
      await expectStoredOn(to, resource, lease)
      await expectHandsOver(resource, lease)
    })

    it('13. keeps working while the slot migrates for longer than the client retries (ASK, TRYAGAIN): extend, release, wait and a new lock', async () => {
      const resource = `c:${name}:ask`
      const neighbour = sameSlotAs(resource) // no keys yet: its commands are sent on with ASK
      const lease = await t.locks.acquire(resource, { ttl: 10_000 })
      const slot = slotOfTag(resource)
      const from = await owner(resource)
      const to = cluster.nodes.find((n) => n !== from)!
      await cluster.beginMigration(slot, to)
      // Until the keys move, scripts whose keys are partly on the source get TRYAGAIN: the clients
      // retry (node-redis through the adapter) while the migration goes on.
      // Settled into values: they are awaited only after the migration.
      const settle = <T>(p: Promise<T>) =>
        p.then(
          (value) => value,
          (err: unknown) => err,
        )
      const extended = settle(lease.extend(10_000).then(() => lease.release()))
      const waited = t.other.acquire(resource, { wait: 8_000 })
      const fresh = t.locks.acquire(neighbour, { wait: 8_000 })
      // Time must pass: the migration outlasts the clients' own TRYAGAIN retries (ioredis: 16 x
      // 100 ms), as a big slot, or a loaded machine, keeps a slot migrating for seconds.
      await sleep(2_500)
      await cluster.finishMigration(slot, to)
      expect(await extended).toBe(true)
      const next = await waited
      expect(next.fence).toBeGreaterThan(lease.fence)
      const freshLease = await fresh
      expect(tokenIn(await to.cli('GET', `fencelock:{${neighbour}}:L`))).toBe(freshLease.token)
      expect(tokenIn(await to.cli('GET', `fencelock:{${resource}}:L`))).toBe(next.token)
      await next.release()
      await freshLease.release()
    })

    it('refuses the replicas option (WAIT cannot be routed to the slot owner)', () => {
      expect(() => createLocks({ redis: t.client.raw, replicas: { count: 1, timeout: 100 } })).toThrow(InvalidArgumentError)
    })
  })
})
