// Transfers across OS processes (issue 9): 6 processes, 4 accounts, 40 random transfers each, the
// two accounts named to withLocks in a random order. Every run must finish (no deadlock between
// [a, b] and [b, a]) with the sum exact and every account exactly where the transfers put it; no
// account is ever worked on by two processes at once. On one Redis, on a Redis Cluster (names
// sharing a hash tag: one atomic script; names on different slots: taken one by one in order),
// and on a quorum of 3.
import { fileURLToPath } from 'node:url'
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mature, requireRedisOrSkip, startCluster, startRedis, type RedisCluster, type RedisProcess } from '../../../harness/redis-server.js'
import { uniquePrefix } from '../../../harness/util.js'
import { useIoredis, useRedis } from '../../../harness/per-adapter.js'
import { killAllWorkers, spawnTsx } from '../../../harness/spawn.js'

const WORKER = fileURLToPath(new URL('../../../harness/workers/transfer-worker.ts', import.meta.url))

const PROCESSES = 6
const TRANSFERS = 40
const START = 1_000

interface Done {
  transfers: number
  declined: number
  net: Record<string, number>
  // Which path took the locks, as the fences show it: one script gives every resource of the lease
  // one fence (src/primitives/multi/multi.ts); locks taken one by one have a fence each.
  atomic: number
  ordered: number
  violations: string[]
}

/** A worker process; resolves with its `done` report, rejects with its stderr if it ends without one. */
function worker(params: Record<string, unknown>, ms: number): Promise<Done> {
  const child = spawnTsx(WORKER, [JSON.stringify(params)], 'ignore')
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), ms)
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      const done = stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event: string } & Done)
        .find((e) => e.event === 'done')
      if (done) resolve(done)
      else
        reject(
          new Error(
            `transfer worker ended without done (exit ${code}, ${signal ?? 'no signal'}${signal === 'SIGKILL' ? `, killed after ${ms} ms: deadlock?` : ''}); stderr: ${stderr.slice(-2_000)}`,
          ),
        )
    })
  })
}

const balanceKey = (prefix: string, account: string) => `${prefix}balance:{${account}}` // as in the worker

/**
 * Opens the accounts with START each, runs the processes, and checks: no violation, every account
 * at START plus what the transfers moved into it, the sum unchanged. Returns the reports.
 */
async function transfers(topology: string, urls: string[], bank: Redis | Cluster, accounts: string[], ttl: number, each = TRANSFERS): Promise<Done[]> {
  const prefix = uniquePrefix(`transfers-${topology}`)
  for (const account of accounts) await bank.set(balanceKey(prefix, account), String(START))
  const params = { topology, urls, prefix, accounts, transfers: each, ttl }
  // Each worker is killed (and its stderr reported) before the test's own 60 s timeout, so a stall
  // says which worker hung and what it printed (a CI run once timed out here with no trace).
  const done = await Promise.all(Array.from({ length: PROCESSES }, () => worker(params, topology === 'quorum' ? 50_000 : 45_000)))
  expect(done.flatMap((d) => d.violations)).toEqual([])
  const balances = await Promise.all(accounts.map(async (a) => Number(await bank.get(balanceKey(prefix, a)))))
  const expected = accounts.map((a) => START + done.reduce((sum, d) => sum + d.net[a]!, 0))
  expect(balances).toEqual(expected)
  expect(balances.reduce((a, b) => a + b, 0)).toBe(START * accounts.length)
  // Not vacuous: most transfers moved money (a few may find the account short).
  const moved = done.reduce((sum, d) => sum + d.transfers, 0)
  expect(moved + done.reduce((sum, d) => sum + d.declined, 0)).toBe(PROCESSES * each)
  expect(moved).toBeGreaterThan((PROCESSES * each) / 2)
  return done
}

/** How many leases of the processes took their locks one by one (the ordered path). */
const orderedIn = (done: Done[]) => done.reduce((sum, d) => sum + d.ordered, 0)

const accountsNamed = (name: (i: number) => string) => [1, 2, 3, 4].map(name)

describe.skipIf(!requireRedisOrSkip())(`transfers across ${PROCESSES} processes (4 accounts, ${TRANSFERS} transfers each, random lock order)`, () => {
  afterAll(killAllWorkers)

  describe('one Redis', () => {
    const server = useRedis()
    const bank = useIoredis(server)

    it('no deadlock; the sum and every balance exact', async () => {
      const done = await transfers(
        'single',
        [server.url],
        bank.client,
        accountsNamed((i) => `account:${i}`),
        5_000,
      )
      expect(orderedIn(done), 'one script took both locks').toBe(0)
    }, 60_000)
  })

  describe('Redis Cluster', () => {
    let cluster: RedisCluster
    let bank: Cluster
    beforeAll(async () => {
      cluster = await startCluster()
      bank = new Cluster(cluster.nodes.map((n) => ({ host: n.host, port: n.port })))
    })
    afterAll(async () => {
      bank?.disconnect()
      await cluster?.stop()
    })
    const urls = () => cluster.nodes.map((n) => n.url)

    it('names sharing a hash tag ({bank}:1 ... {bank}:4): taken atomically in one slot; no deadlock; sums exact', async () => {
      const done = await transfers(
        'cluster',
        urls(),
        bank,
        accountsNamed((i) => `{bank}:${i}`),
        5_000,
      )
      expect(orderedIn(done), 'one script took both locks').toBe(0)
    }, 60_000)

    it('names on different slots: taken one by one in sorted order; no deadlock; sums exact', async () => {
      const accounts = accountsNamed((i) => `account:${i}`)
      const slots = await Promise.all(accounts.map((a) => cluster.slotOf(a)))
      const owners = new Set(await Promise.all(slots.map(async (s) => (await cluster.nodeForSlot(s)).port)))
      expect(owners.size, `slots ${slots.join(', ')} on more than one node`).toBeGreaterThan(1)
      const done = await transfers('cluster', urls(), bank, accounts, 5_000)
      expect(orderedIn(done), 'the ordered path was taken').toBeGreaterThan(0)
    }, 60_000)
  })

  describe('quorum of 3', () => {
    let nodes: RedisProcess[] = []
    let bank: Redis | undefined
    beforeAll(async () => {
      nodes = await Promise.all([0, 1, 2].map(() => startRedis()))
      bank = new Redis(nodes[0]!.url)
      await mature(nodes, 2_000) // the workers' maxTtl (2 s): fresh nodes count once up that long
    })
    afterAll(async () => {
      bank?.disconnect()
      await Promise.all(nodes.map((n) => n.stop()))
    })

    it(`${TRANSFERS} transfers per process: no deadlock; the sum and every balance exact`, async () => {
      await transfers(
        'quorum',
        nodes.map((n) => n.url),
        bank!,
        accountsNamed((i) => `account:${i}`),
        2_000,
      )
    }, 60_000)
  })
})
