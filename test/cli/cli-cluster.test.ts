// The `fencelock` command on a real 3-master Redis Cluster (--cluster, one seed): inspect's listing
// SCANs every master, so locks whose names hash to different masters are all found, with ioredis
// and node-redis; run takes a lock through the cluster client.
import os from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type Lease, type Locks } from '../../src/index.js'
import { mutexKeys } from '../../src/primitives/mutex/mutex.js'
import { cliOutcome as cli } from '../../harness/cli-process.js'
import { requireRedisOrSkip } from '../../harness/redis-server.js'
import { clusterAdapters, useClusterClient } from '../../harness/cluster-clients.js'
import { useCluster } from '../../harness/per-adapter.js'
import { closeQuietly, uniquePrefix } from '../../harness/util.js'

describe.skipIf(!requireRedisOrSkip())('fencelock CLI on Redis Cluster', () => {
  const cluster = useCluster({ masters: 3 })
  const ioredis = useClusterClient(clusterAdapters[0]!, cluster)
  let locks: Locks
  const prefix = uniquePrefix('cli-cluster')
  beforeAll(() => {
    locks = createLocks({ redis: ioredis.client.raw, prefix })
  })
  afterAll(() => closeQuietly([locks]))

  it('inspect --cluster finds locks on every master (ioredis and node-redis); run holds a lock through the cluster', async () => {
    // Names until three masters are covered.
    const names: string[] = []
    const masters = new Set<number>()
    for (let i = 0; masters.size < 3 && i < 200; i++) {
      const owner = (await cluster.nodeForSlot(await cluster.slotOf(mutexKeys(prefix, `job-${i}`).lock))).port
      if (!masters.has(owner)) {
        masters.add(owner)
        names.push(`job-${i}`)
      }
    }
    expect(masters.size).toBe(3)
    const leases: Lease[] = await Promise.all(names.map((n) => locks.acquire(n, { ttl: 30_000 })))
    try {
      const seed = ['--cluster', '--redis', cluster.nodes[1]!.url, '--prefix', prefix]
      const [io, nr, ran] = await Promise.all([
        // A glob that leaves out job-run, which the third call holds meanwhile.
        cli([...seed, 'inspect', 'job-[0-9]*', '--json']),
        cli([...seed, '--client', 'node-redis', 'inspect', 'job-[0-9]*', '--json']),
        cli([...seed, 'run', 'job-run', '--', process.execPath, '-e', 'console.log(process.env.FENCELOCK_RESOURCE)']),
      ])
      const expected = leases.map((l) => ({
        kind: 'mutex',
        resource: l.resource,
        // Held by this test's process (its default label), since the grant on the slot's master.
        holders: [
          {
            token: l.token,
            fence: l.fence,
            ttl: expect.any(Number),
            holder: `${os.hostname()}:${process.pid}`,
            since: expect.any(Number),
            lastExtended: expect.any(Number),
          },
        ],
        fence: l.fence,
        waiters: 0,
      }))
      expected.sort((a, b) => (a.resource < b.resource ? -1 : 1))
      expect(io.stderr).toBe('')
      expect(JSON.parse(io.stdout)).toEqual(expected)
      expect(nr.stderr).toBe('')
      expect(JSON.parse(nr.stdout)).toEqual(expected)
      expect(ran).toEqual({ code: 0, stdout: 'job-run\n', stderr: '' })
      expect(await locks.inspect('job-run')).toMatchObject({ held: false, fence: expect.any(Number) })
    } finally {
      await Promise.all(leases.map((l) => l.release()))
    }
  }, 60_000)

  // Last: a paused node leaves the cluster's state disturbed for a while after it is continued.
  it('a seed that takes connections but never answers: --cluster inspect and run exit 69 within seconds (ioredis and node-redis)', async () => {
    const seed = cluster.nodes[2]!
    seed.pause()
    try {
      const args = ['--cluster', '--redis', seed.url, '--prefix', prefix]
      const results = await Promise.all([
        cli([...args, 'inspect']),
        cli([...args, '--client', 'node-redis', 'inspect']),
        cli([...args, 'run', 'job-paused', '--wait', '0', '--', 'true']),
        cli([...args, '--client', 'node-redis', 'run', 'job-paused', '--wait', '0', '--', 'true']),
      ])
      for (const result of results) {
        expect(result).toMatchObject({ code: 69, stdout: '', stderr: expect.stringContaining(`Redis at ${seed.url} did not answer within`) })
      }
    } finally {
      seed.resume()
    }
  }, 60_000)
})
