// Batched renewals on a real redis-server: thousands of auto-extended leases are renewed in a few
// script calls per period (counted with INFO commandstats), every lease still learns its own fate
// (a deleted or taken-over lock loses exactly that lease, with the reason a single extend gives),
// and a frozen Redis (SIGSTOP) loses the leases whose deadline passed, as without batching. With
// replicas (WAIT), a batch is judged by its one WAIT: a paused replica loses every lease in it at
// its deadline, as a single extend's ReplicationError would. On a Redis Cluster, one call per slot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, LockLostError, ReplicationError, type Lease, type Locks } from '../../src/index.js'
import { mutexKeys } from '../../src/primitives/mutex/mutex.js'
import { adapters, type TestClient } from '../../harness/clients.js'
import { Cluster } from 'ioredis'
import { createCluster } from 'redis'
import { clusterSlot } from '../../src/util/keys.js'
import type { RedisClient } from '../../src/index.js'
import { callsOfAll, scriptCalls, scriptCallsOver } from '../../harness/commandstats.js'
import { startCluster, type RedisCluster } from '../../harness/redis-server.js'
import { closeQuietly, sleep, uniquePrefix, until } from '../../harness/util.js'
import { describeRedis, perAdapter, useReplicated } from '../../harness/per-adapter.js'
import { record } from '../../harness/telemetry.js'
import { expectExactlyLost } from '../../harness/leases.js'

async function acquireMany(locks: Locks, names: readonly string[], ttl: number): Promise<Lease[]> {
  const leases: Lease[] = []
  for (let i = 0; i < names.length; i += 500)
    leases.push(...(await Promise.all(names.slice(i, i + 500).map((name) => locks.acquire(name, { ttl, autoExtend: true })))))
  return leases
}

describeRedis('batched renewals', (server) => {
  perAdapter(server, (t) => {
    let locks: Locks
    let prefix: string

    it('renews 5,000 leases in at most one script call per 100 leases per period; each lease learns its own loss', async () => {
      prefix = uniquePrefix('renewals')
      locks = t.open({ prefix })
      // 2 s: with 1 s, a machine loaded by other suites (load average 20 on 2 cores) let the
      // renewal timers of up to 1,008 leases run more than the 667 ms of slack late, and they
      // expired (reason 'expired': no renewal had gone out).
      const ttl = 2_000
      const names = Array.from({ length: 5_000 }, (_, i) => `r${i}`)
      const leases = await acquireMany(locks, names, ttl)
      // Time must pass: the renewals are counted over two ttls (4 s, as before with four of 1 s).
      const { calls, elapsed } = await scriptCallsOver(server.redis, 2 * ttl)
      const periods = elapsed / (ttl / 3)
      // Every lease outlived two ttls: it was renewed about every third of one.
      expect(leases.filter((l) => !l.held || l.signal.aborted)).toEqual([])
      expect(calls).toBeGreaterThan(0)
      expect(calls).toBeLessThanOrEqual(Math.ceil(periods + 1) * (5_000 / 100))
      expect(Number(await t.client.command('PTTL', mutexKeys(prefix, 'r4999').lock))).toBeGreaterThan(0)

      // Behind the leases' backs: 20 locks deleted, one taken over by another token.
      const gone = [3, 250, 251, 777, 1_000, 1_999, 2_000, 2_001, 2_500, 3_333, 3_334, 3_999, 4_000, 4_001, 4_250, 4_500, 4_750, 4_998, 4_999, 0]
      for (const i of gone) await t.client.command('DEL', mutexKeys(prefix, names[i]!).lock)
      const takenOver = 1_234
      await t.client.command('SET', mutexKeys(prefix, names[takenOver]!).lock, 'someone-else', 'PX', 60_000)
      const lost = new Set([...gone, takenOver])
      await expectExactlyLost(leases, lost, ttl)
      // The taken-over lock is left alone.
      expect(await t.client.command('GET', mutexKeys(prefix, names[takenOver]!).lock)).toBe('someone-else')
      await locks.close({ release: true })
    }, 30_000)

    it('while Redis is frozen (SIGSTOP), a batch loses the leases whose deadline passed and keeps the others', async () => {
      prefix = uniquePrefix('renewals-frozen')
      locks = t.open({ prefix })
      // The long leases first, then the short ones, then the freeze at once: the short leases must
      // still be held when Redis freezes (with the short ones first and a ttl of 300 ms, a loaded
      // machine let some expire while the long ones were acquired: 'expired', before the freeze).
      const long = await acquireMany(
        locks,
        Array.from({ length: 300 }, (_, i) => `l${i}`),
        4_000,
      )
      const short = await acquireMany(
        locks,
        Array.from({ length: 300 }, (_, i) => `s${i}`),
        600,
      )
      expect(short.filter((l) => !l.held)).toEqual([]) // the premise
      const lostAt = new Map<Lease, number>()
      for (const lease of short) lease.signal.addEventListener('abort', () => lostAt.set(lease, performance.now()))
      const extensions = record('fencelock:extend')
      let resumedAt = Number.POSITIVE_INFINITY
      server.redis.pause()
      try {
        // promise 2: lost at the deadline, 600 ms; 10x margin.
        await until('every short lease to be lost', () => lostAt.size === short.length, { timeout: 6_000 })
      } finally {
        server.redis.resume()
        resumedAt = performance.now()
      }
      try {
        // The long leases' renewals are answered after the resume: each of them is extended again.
        const longTokens = new Set(long.map((l) => l.token))
        await until('every long lease was extended since the freeze', () => {
          const extended = new Set(extensions.events.filter((e) => e.outcome === 'extended' && longTokens.has(e.token)).map((e) => e.token))
          return extended.size === long.length
        })
      } finally {
        extensions.stop()
      }
      for (const lease of short) {
        const reason = lease.signal.reason as LockLostError
        expect(reason).toBeInstanceOf(LockLostError)
        expect(reason.reason).toBe('unreachable') // its renewal was waiting for the frozen Redis
        // Lost at its deadline: never before it (the alarm fires at most 1 ms early; a lower bound),
        // and while Redis was still frozen, so by the deadline alarm, not by a late reply.
        expect(lostAt.get(lease)!).toBeGreaterThanOrEqual(lease.deadline - 1)
        expect(lostAt.get(lease)!).toBeLessThan(resumedAt)
      }
      expect(long.filter((l) => !l.held || l.signal.aborted)).toEqual([])
      await locks.close({ release: true })
    }, 30_000)
  })

  describe.each(adapters)('$name, with a replica (WAIT)', (adapter) => {
    const pair = useReplicated()
    let client: TestClient
    let locks: Locks
    beforeAll(async () => {
      client = await adapter.connect(pair.primary.url)
    })
    afterAll(async () => {
      await closeQuietly([locks])
      await client?.disconnect()
    })

    it('renews a batch with one WAIT behind it; a paused replica loses every lease of the batch at its deadline', async () => {
      // A WAIT timeout of an eighth of the ttl: a replica that a loaded machine leaves unscheduled for
      // a few hundred ms must not fail every renewal before the pause (a CI run lost 146 of 600 leases
      // with 100 ms and a ttl of 900 ms).
      locks = createLocks({ redis: client.raw, prefix: uniquePrefix('renewals-replica'), replicas: { count: 1, timeout: 250 } })
      const ttl = 2_000
      const leases = await acquireMany(
        locks,
        Array.from({ length: 600 }, (_, i) => `p${i}`),
        ttl,
      )
      await pair.primary.cli('CONFIG', 'RESETSTAT')
      // Time must pass: the renewals are counted over two ttls.
      await sleep(2 * ttl)
      expect(leases.filter((l) => !l.held || l.signal.aborted)).toEqual([])
      const [scripts, evals, waits] = await callsOfAll(pair.primary, ['evalsha', 'eval', 'wait'])
      expect(scripts).toBeGreaterThan(0)
      expect(scripts).toBeLessThanOrEqual(Math.ceil((2 * ttl) / (ttl / 3) + 1) * (600 / 100))
      // One WAIT per script call; a batch whose script Redis has run but whose WAIT it has not yet
      // received when the counts are read is one call ahead (seen once in a loaded CI run: 15 and 14).
      expect(scripts! + evals! - waits!).toBeGreaterThanOrEqual(0)
      expect(scripts! + evals! - waits!).toBeLessThanOrEqual(1)

      pair.replica.pause()
      try {
        await until('every lease to be lost', () => leases.every((l) => l.signal.aborted), { timeout: 3 * ttl })
      } finally {
        pair.replica.resume()
      }
      // Every lease is lost by its deadline, 'unreachable'. Most say their renewals failed (the
      // ReplicationError). A group whose first renewal was still unanswered at its deadline (about
      // 1 run in 4: each WAIT blocks the one connection for its 250 ms timeout while the replica is
      // paused, so the batches queued behind it are answered too late) says it had no reply.
      const reasons = leases.map((lease) => lease.signal.reason as LockLostError)
      for (const reason of reasons) {
        expect(reason).toBeInstanceOf(LockLostError)
        expect(reason.reason).toBe('unreachable')
        if (!(reason.cause instanceof ReplicationError)) expect((reason.cause as Error).message).toMatch(/^No reply from Redis within \d+ ms to the extension/)
      }
      expect(reasons.filter((r) => r.cause instanceof ReplicationError).length).toBeGreaterThan(leases.length / 2)
      await locks.close({ release: true })
    }, 30_000)
  })

  describe('on a Redis Cluster', () => {
    let cluster: RedisCluster
    beforeAll(async () => {
      cluster = await startCluster({ masters: 3 })
    }, 60_000)
    afterAll(async () => {
      await cluster?.stop()
    })
    const connectors: { name: string; connect(): Promise<{ raw: RedisClient; close(): Promise<void> }> }[] = [
      {
        name: 'ioredis',
        async connect() {
          const client = new Cluster([{ host: '127.0.0.1', port: cluster.nodes[0]!.port }])
          client.on('error', () => {})
          await new Promise<void>((resolve) => client.once('ready', resolve))
          return { raw: client, close: async () => client.disconnect() }
        },
      },
      {
        name: 'node-redis',
        async connect() {
          const client = createCluster({ rootNodes: [{ url: cluster.nodes[0]!.url }] })
          client.on('error', () => {})
          await client.connect()
          return { raw: client, close: async () => void client.destroy() }
        },
      },
    ]

    it.each(connectors)(
      '$name: the leases of one slot share a call, the others go per slot; a deleted lock loses only its lease',
      async ({ connect }) => {
        const client = await connect()
        const prefix = uniquePrefix('renewals-cluster')
        const locks = createLocks({ redis: client.raw, prefix })
        try {
          // 200 resources in one slot (found by the slot of their lock key), 100 spread over others.
          const slot = clusterSlot(mutexKeys(prefix, 'g0').lock)
          const grouped: string[] = []
          for (let i = 0; grouped.length < 200; i++) if (clusterSlot(mutexKeys(prefix, `g${i}`).lock) === slot) grouped.push(`g${i}`)
          const spread = Array.from({ length: 100 }, (_, i) => `s${i}`)
          const ttl = 900
          const leases = await acquireMany(locks, [...grouped, ...spread], ttl)
          const masters = await cluster.masters()
          await Promise.all(masters.map((m) => m.cli('CONFIG', 'RESETSTAT')))
          // Time must pass: the renewals are counted over two ttls.
          await sleep(2 * ttl)
          expect(leases.filter((l) => !l.held || l.signal.aborted)).toEqual([])
          let calls = 0
          for (const m of masters) calls += await scriptCalls(m)
          const periods = Math.ceil((2 * ttl) / (ttl / 3) + 1)
          // Per period: at most one call for the 200 of one slot, and at most one per spread lease.
          expect(calls).toBeLessThanOrEqual(periods * (1 + spread.length))

          const gone = [0, 57, 199, 200, 299] // three of the slot's batch, two spread ones
          for (const i of gone) await deleteKey(client.raw, mutexKeys(prefix, leases[i]!.resource).lock)
          await until('the deleted leases to be lost', () => gone.every((i) => leases[i]!.signal.aborted), { timeout: 3 * ttl })
          // Time must pass: half a ttl more, in which no other lease may be lost.
          await sleep(ttl / 2)
          const lost = leases.flatMap((l, i) => (l.signal.aborted ? [i] : []))
          expect(lost).toEqual(gone)
          for (const i of gone) expect((leases[i]!.signal.reason as LockLostError).reason).toBe('refused')
          await locks.close({ release: true })
        } finally {
          await closeQuietly([locks])
          await client.close()
        }
      },
      60_000,
    )
  })
})

/** DEL on whichever client type (both route a single-key command by its slot). */
async function deleteKey(raw: RedisClient, key: string): Promise<void> {
  const client = raw as unknown as { del(key: string): Promise<unknown>; DEL?: (key: string) => Promise<unknown> }
  await (client.DEL ? client.DEL(key) : client.del(key))
}
