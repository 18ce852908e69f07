// Failure scenario 13 under load, for every cluster client (GLIDE first, explicitly: it is not in
// the default adapter set): leases acquired, extended and released on one slot while that slot
// moves to another master. Calls in flight meet ASK and TRYAGAIN while it migrates and MOVED once
// it moved; each client must follow them (ioredis and node-redis do it themselves, GLIDE's
// explicitly routed script calls through the adapter), so every call succeeds.
import { describe, expect, it } from 'vitest'
import type { Lease } from '../../src/index.js'
import { clusterSlot } from '../../src/util/keys.js'
import { everyCluster, useClusterLocks } from '../../harness/cluster-clients.js'
import { useCluster } from '../../harness/per-adapter.js'
import { requireRedisOrSkip } from '../../harness/redis-server.js'
import { until } from '../../harness/until.js'

/** Every cluster client, whatever FENCELOCK_ADAPTERS names: the point is that the three agree. */
const allClusterClients = everyCluster

/** `count` resource names whose keys all land in one slot (the slot of the first). */
function namesInOneSlot(base: string, count: number): string[] {
  const slot = clusterSlot(base)
  const names = [base]
  for (let i = 0; names.length < count; i++) if (clusterSlot(`${base}-${i}`) === slot) names.push(`${base}-${i}`)
  return names
}

type Op = 'acquire' | 'extend' | 'release'

/** Leases on one slot: this many held across the migration, and as many first acquired while it migrates. */
const LEASES = 16

describe.skipIf(!requireRedisOrSkip())('Redis Cluster: leases while their slot moves to another master', () => {
  const cluster = useCluster({ masters: 3 })

  describe.each(allClusterClients)('with $name', (adapter) => {
    const t = useClusterLocks(adapter, cluster, { ttl: 10_000 })

    it('13. acquire, extend and release each succeed on a slot that migrates under them (ASK, TRYAGAIN, then MOVED)', async () => {
      // Held: acquired before the migration, their keys on the source. Fresh: acquired while the
      // slot migrates; no key of theirs is on the source, so each call is sent on to the target (ASK).
      const [, ...names] = namesInOneSlot(`mig:${adapter.name}`, 2 * LEASES + 1)
      const slot = clusterSlot(names[0]!)
      const from = await cluster.nodeForSlot(slot)
      const to = cluster.nodes.find((n) => n !== from)!
      const failures: Record<Op, string[]> = { acquire: [], extend: [], release: [] }
      /** One call, its failure recorded. */
      const record = async <T>(op: Op, call: () => Promise<T>): Promise<T | undefined> => {
        try {
          return await call()
        } catch (err) {
          failures[op].push(`${(err as Error).name}: ${(err as Error).message}`)
          return undefined
        }
      }
      const acquire = (resource: string) => record('acquire', () => t.locks.acquire(resource, { wait: 8_000 }))
      const release = async (lease: Lease | undefined) => {
        if (!lease) return
        const released = await record('release', () => lease.release())
        if (released === false) failures.release.push(`${lease.resource}: release found the lease gone`)
      }

      const held = await Promise.all(names.slice(0, LEASES).map(acquire))
      expect(failures.acquire).toEqual([])
      await cluster.beginMigration(slot, to)
      // The held leases' keys are still on the source: their extensions meet TRYAGAIN (the
      // queue keys count as moved) until the slot has moved, and are retried meanwhile.
      const extended = held.map((lease) => lease && record('extend', () => lease.extend(10_000)))
      // Settled only after the move: until then they meet ASK, then TRYAGAIN, and are retried.
      const acquired = Promise.all(names.slice(LEASES).map(acquire))
      await cluster.finishMigration(slot, to)
      await Promise.all(extended)
      const fresh = await acquired
      // Right after the move, in parallel: the clients' slot maps may still name the source (MOVED).
      await Promise.all([...held, ...fresh].map(async (lease) => lease && (await record('extend', () => lease.extend(10_000)))))
      await Promise.all([...held, ...fresh].map(release))

      expect(failures.acquire).toEqual([])
      expect(failures.extend).toEqual([])
      expect(failures.release).toEqual([])
      // The lock and fence keys moved together: every fence on the target, no lock left.
      for (const [i, resource] of names.entries()) {
        expect(Number(await to.cli('GET', `fencelock:{${resource}}:F`))).toBe([...held, ...fresh][i]!.fence)
        expect(await to.cli('EXISTS', `fencelock:{${resource}}:L`)).toBe('0')
      }
    })

    it('13. extend and release succeed when sent while the keys have moved but the slot still migrates (ASK)', async () => {
      const [, ...names] = namesInOneSlot(`ask:${adapter.name}`, LEASES + 1)
      const slot = clusterSlot(names[0]!)
      const from = await cluster.nodeForSlot(slot)
      const to = cluster.nodes.find((n) => n !== from)!
      const leases = await Promise.all(names.map((resource) => t.locks.acquire(resource)))
      await cluster.beginMigration(slot, to)
      // The keys move first; the slot stays MIGRATING on the source, which now answers ASK for them.
      const keys = (await from.cli('CLUSTER', 'GETKEYSINSLOT', String(slot), '1000')).split('\n').filter(Boolean)
      expect(keys).toHaveLength(2 * LEASES)
      await from.cli('MIGRATE', '127.0.0.1', String(to.port), '', '0', '5000', 'KEYS', ...keys)
      // Many calls in flight at once, as under load: each sent in a turn of the event loop of its
      // own (calls of one turn share one script call), settled into values, awaited after the move.
      // GLIDE follows the ASK for most of them and hands some back as the target's MOVED (to the
      // source): a release of a held lease must not fail for that (issue 45).
      const settle = <T>(p: Promise<T>) =>
        p.then(
          (value) => ({ value }),
          (err: unknown) => ({ err: `${(err as Error).name}: ${(err as Error).message}` }),
        )
      const outcomes: Promise<{ value: boolean } | { err: string }>[] = []
      for (const [i, lease] of leases.entries()) {
        outcomes.push(settle(i % 2 === 0 ? lease.extend(10_000).then(() => lease.release()) : lease.release()))
        await new Promise((resolve) => setImmediate(resolve))
      }
      await cluster.finishMigration(slot, to)
      expect(await Promise.all(outcomes)).toEqual(leases.map(() => ({ value: true })))
      for (const lease of leases) expect(Number(await to.cli('GET', `fencelock:{${lease.resource}}:F`))).toBe(lease.fence)
    })

    it('13. release and extend that meet an ASK the client cannot follow are retried until the slot settles', async () => {
      // Mid-migration the nodes' views of a slot may disagree for a moment: the source, MIGRATING,
      // answers ASK for a key it no longer has; the target, told that a third node owns the slot,
      // answers the ASKING call with MOVED there, and the third node sends it back to the source.
      // A client runs out of redirections on that cycle (GLIDE hands back "- Ask: …"); the call
      // must be retried, not fail, and succeed once the slot settles on the target (issue 45).
      const [, ...names] = namesInOneSlot(`askcycle:${adapter.name}`, 5)
      const slot = clusterSlot(names[0]!)
      const from = await cluster.nodeForSlot(slot)
      const [to, third] = cluster.nodes.filter((n) => n !== from) as [typeof from, typeof from]
      const leases = await Promise.all(names.map((resource) => t.locks.acquire(resource)))
      await cluster.beginMigration(slot, to)
      const keys = (await from.cli('CLUSTER', 'GETKEYSINSLOT', String(slot), '1000')).split('\n').filter(Boolean)
      await from.cli('MIGRATE', '127.0.0.1', String(to.port), '', '0', '5000', 'KEYS', ...keys)
      await to.cli('CLUSTER', 'SETSLOT', String(slot), 'NODE', await third.cli('CLUSTER', 'MYID'))
      await from.cli('CONFIG', 'RESETSTAT')
      const asks = async () => Number(/^errorstat_ASK:count=(\d+)/m.exec(await from.cli('INFO', 'errorstats'))?.[1] ?? 0)
      const outcomes = leases.map((lease, i) =>
        (i % 2 === 0 ? lease.extend(10_000).then(() => lease.release()) : lease.release()).then(
          (value) => ({ value }),
          (err: unknown) => ({ err: `${(err as Error).name}: ${(err as Error).message}` }),
        ),
      )
      // The calls met the cycle (the source answered ASK) before the slot settles.
      await until('the source answered ASK to every call', async () => (await asks()) >= leases.length)
      await to.cli('CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', await from.cli('CLUSTER', 'MYID'))
      await cluster.finishMigration(slot, to)
      expect(await Promise.all(outcomes)).toEqual(leases.map(() => ({ value: true })))
      for (const lease of leases) expect(await to.cli('EXISTS', `fencelock:{${lease.resource}}:L`)).toBe('0')
    })
  })
})
