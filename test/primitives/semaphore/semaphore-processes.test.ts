// The semaphore across OS processes, as the protected side counts it (INCR on entry, DECR on exit):
// never more than `limit` inside, all work done, on one Redis, a Redis Cluster and a quorum of 3;
// a holder killed with -9 frees its permit within its ttl. And the quorum case that naive per-node
// counting gets wrong: 3 nodes, limit 2, permits sought through disjoint majorities.
import type { ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type Lease, type Locks } from '../../../src/index.js'
import { startFaultProxy, type FaultProxy } from '../../../harness/fault-proxy.js'
import { mature, requireRedisOrSkip, startCluster, startRedis, type RedisCluster, type RedisProcess } from '../../../harness/redis-server.js'
import { recordAcquires } from '../../../harness/telemetry.js'
import { uniquePrefix, until } from '../../../harness/util.js'
import { useIoredis, useRedis } from '../../../harness/per-adapter.js'
import { killAllWorkers, spawnTsx } from '../../../harness/spawn.js'

const WORKER = fileURLToPath(new URL('../../../harness/workers/semaphore-worker.ts', import.meta.url))

interface Run {
  child: ChildProcess
  events: Record<string, unknown>[]
  next(event: string, ms: number): Promise<Record<string, unknown>>
}

function worker(params: Record<string, unknown>): Run {
  const child = spawnTsx(WORKER, [JSON.stringify(params)], 'ignore')
  const events: Record<string, unknown>[] = []
  let buffered = ''
  let stderr = ''
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()))
  child.stdout!.on('data', (c: Buffer) => {
    buffered += c.toString()
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      events.push(JSON.parse(buffered.slice(0, end)) as Record<string, unknown>)
      buffered = buffered.slice(end + 1)
    }
  })
  return {
    child,
    events,
    next(event, ms) {
      const reported = () => {
        const found = events.find((e) => e.event === event)
        if (!found && child.exitCode !== null) throw new Error(`it exited (${child.exitCode})`)
        return found
      }
      return until(`the worker reports ${event}`, reported, { timeout: ms, every: 20 }).catch((err: unknown) => {
        throw new Error(`worker: no ${event} within ${ms} ms (${(err as Error).message}); stderr: ${stderr.slice(-2_000)}`)
      })
    },
  }
}

const PROCESSES = 12
const LIMIT = 3
const PERMITS = 20

async function crowd(topology: string, urls: string[], counter: { get(key: string): Promise<string | null> }): Promise<void> {
  const prefix = uniquePrefix(`sem-${topology}`)
  const ttl = topology === 'quorum' ? 2_000 : 5_000 // quorum: within maxTtl (2 s in the worker)
  const runs = Array.from({ length: PROCESSES }, () => worker({ topology, urls, prefix, name: 'pool', limit: LIMIT, permits: PERMITS, holdMs: 3, ttl }))
  const done = await Promise.all(runs.map((r) => r.next('done', 90_000)))
  expect(done.flatMap((d) => d.violations as string[])).toEqual([])
  const max = Math.max(...done.map((d) => d.max as number))
  expect(max).toBeLessThanOrEqual(LIMIT)
  expect(max, 'the permits were used concurrently at all').toBeGreaterThan(1)
  expect(Number(await counter.get(`${prefix}{inside}`))).toBe(0)
}

describe.skipIf(!requireRedisOrSkip())(`semaphore across ${PROCESSES} processes (limit ${LIMIT}, ${PERMITS} permits each)`, () => {
  afterAll(killAllWorkers)

  describe('one Redis', () => {
    const server = useRedis()
    const control = useIoredis(server)

    it('never more than the limit inside; every permit taken and given back', async () => {
      await crowd('single', [server.url], control.client)
    }, 120_000)

    it('14. a holder killed with -9 frees its permit within its ttl; a waiter gets it then', async () => {
      const prefix = uniquePrefix('sem-kill')
      const holder = worker({ topology: 'single', urls: [server.url], prefix, name: 'pool', limit: 1, permits: 0, holdMs: 0, ttl: 1_500, hold: true })
      await holder.next('holding', 30_000)
      const locks = createLocks({ redis: control.client, prefix })
      const acquires = recordAcquires()
      try {
        const pool = locks.semaphore('pool', { limit: 1 })
        expect(await pool.tryAcquire()).toBeNull()
        holder.child.kill('SIGKILL')
        const permit = await pool.acquire({ ttl: 5_000, wait: 10_000 })
        // Nobody released it: the waiter got in at its first re-check, which the dead holder's
        // remaining ttl bounds (auto-extended every 500 ms, it lives at most one ttl, 1.5 s, after the kill).
        const wakes = acquires.of('pool').find((e) => e.token === permit.token)!.wakes
        expect(wakes).not.toContain('release')
        expect(wakes.filter((why) => why === 'recheck')).toEqual(['recheck'])
        expect(wakes.at(-1)).toBe('recheck')
        await permit.release()
      } finally {
        acquires.stop()
        await locks.close()
      }
    }, 60_000)
  })

  describe('Redis Cluster', () => {
    let cluster: RedisCluster
    beforeAll(async () => {
      cluster = await startCluster()
    })
    afterAll(() => cluster?.stop())

    it('never more than the limit inside, all keys of the semaphore in one slot', async () => {
      const { Cluster } = await import('ioredis')
      const control = new Cluster(cluster.nodes.map((n) => ({ host: n.host, port: n.port })))
      try {
        await crowd(
          'cluster',
          cluster.nodes.map((n) => n.url),
          control,
        )
      } finally {
        control.disconnect()
      }
    }, 120_000)
  })

  describe('quorum of 3', () => {
    let nodes: RedisProcess[] = []
    let clients: Redis[] = []
    beforeAll(async () => {
      nodes = await Promise.all([0, 1, 2].map(() => startRedis()))
      clients = nodes.map((n) => new Redis(n.url))
      await mature(nodes, 2_000) // the workers' maxTtl: fresh nodes count once up that long
    })
    afterAll(async () => {
      for (const c of clients) c.disconnect()
      await Promise.all(nodes.map((n) => n.stop()))
    })

    it('never more than the limit inside', async () => {
      await crowd(
        'quorum',
        nodes.map((n) => n.url),
        clients[0]!,
      )
    }, 120_000)

    it('14. 3 nodes, limit 2, disjoint majorities {A,B}, {B,C}, {A,C}: never 3 permits (per-node counting would grant them)', async () => {
      const proxies: FaultProxy[] = await Promise.all(nodes.map((n) => startFaultProxy({ host: n.host, port: n.port })))
      const prefix = uniquePrefix('sem-disjoint')
      // Instance i reaches every node through a proxy; node (i + 2) % 3 is cut off for it.
      const per = await Promise.all(
        [0, 1, 2].map(async (_i) => {
          const raw = proxies.map((p) => {
            const c = new Redis(p.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true })
            c.on('error', () => {})
            return c
          })
          await Promise.all(raw.map((c) => c.connect()))
          return raw
        }),
      )
      const instances: Locks[] = per.map((raw) => createLocks({ redis: raw, prefix, maxTtl: 2_000, ttl: 2_000, quorum: { nodeTimeout: 150 } }))
      const held: Lease[] = []
      try {
        // Cut: instance 0 sees A,B; instance 1 sees B,C; instance 2 sees A,C. Each one's client to
        // its cut-off node is dropped, so only that instance loses the node.
        per[0]![2]!.disconnect()
        per[1]![0]!.disconnect()
        per[2]![1]!.disconnect()
        for (const [i, locks] of instances.entries()) {
          const permit = await locks
            .semaphore('pool', { limit: 2 })
            .tryAcquire({ ttl: 2_000 })
            .catch(() => null)
          if (permit) held.push(permit)
          // Naive per-node counting: {A,B} count 1, {B,C}: B 2, C 1, {A,C}: A 2, C 2 -> 3 permits.
          expect(held.filter((p) => p.held).length, `after instance ${i}`).toBeLessThanOrEqual(2)
        }
        expect(held.length, 'instance 0 (nodes A and B free) got a permit: the test is not vacuous').toBeGreaterThanOrEqual(1)
        // And as the nodes themselves show it: no slot is held by two tokens on a majority.
        const info = await createLocks({ redis: clients, prefix, maxTtl: 2_000, ttl: 2_000 }).semaphore('pool', { limit: 2 }).inspect()
        expect(info.held).toBeLessThanOrEqual(2)
      } finally {
        await Promise.allSettled(held.map((p) => p.release()))
        await Promise.allSettled(instances.map((l) => l.close()))
        for (const raw of per) for (const c of raw) c.disconnect()
        await Promise.all(proxies.map((p) => p.close()))
      }
    }, 60_000)
  })
})
