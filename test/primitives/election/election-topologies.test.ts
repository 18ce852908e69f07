// The election on every topology, once per client adapter: with `replicas` (WAIT), on a Redis
// Cluster (every key of an election in its hash tag's slot), and in quorum mode (3 masters: the
// leader is the one a majority holds; observers read the majority's view). On each: campaign,
// proclaim, resign hands over to the next in line with a larger term, observers see it in order.
import { describe, expect, it } from 'vitest'
import { createLocks, type Leader, type Locks, type LocksOptions } from '../../../src/index.js'
import { adapters } from '../../../harness/clients.js'
import { requireRedisOrSkip } from '../../../harness/redis-server.js'
import { closeQuietly, uniquePrefix, until } from '../../../harness/util.js'
import { clusterAdapters } from '../../../harness/cluster-clients.js'
import { quorumPerAdapter, useCluster, useReplicated } from '../../../harness/per-adapter.js'

const QUORUM_MAX_TTL = 1_000

/** Campaign, proclaim, a queued second candidate, resign, vacancy: as two instances and an observer see it. */
async function handover(a: Locks, b: Locks, observer: Locks, name: string): Promise<void> {
  const seen: (Leader | null)[] = []
  const stop = new AbortController()
  const observing = (async () => {
    for await (const leader of observer.election(name).observe({ signal: stop.signal })) seen.push(leader)
  })()
  await until('the first state', () => seen.length === 1)
  const first = await a.election(name, { ttl: 1_000 }).campaign('a')
  await first.proclaim('a2')
  const second = b.election(name, { ttl: 1_000 }).campaign('b', { wait: 5_000 })
  await until('b is in line', async () => (await observer.election(name).inspect()).candidates === 1, { timeout: 3_000 })
  expect(await observer.election(name).leader()).toMatchObject({ value: 'a2', fence: first.fence, version: 1 })
  await first.resign()
  const next = await second
  expect(next.fence).toBeGreaterThan(first.fence)
  await until('the second term observed', () => seen.some((l) => l?.value === 'b'), { timeout: 3_000 })
  await next.resign()
  await until('the vacancy observed', () => seen.at(-1) === null && seen.length > 2, { timeout: 3_000 })
  expect(await observer.election(name).leader()).toBeNull()
  stop.abort()
  await observing
  // Every state in order; a quorum's observer reads the merged view, so it may skip one that came and went.
  const values = seen.map((l) => (l === null ? null : l.value))
  expect(values[0]).toBeNull()
  expect(values.at(-1)).toBeNull()
  expect(values.filter((v) => v !== null)).toEqual(expect.arrayContaining(['a2', 'b']))
  const terms = seen.flatMap((l) => (l ? [l.fence * 1_000 + l.version] : []))
  expect([...terms].sort((x, y) => x - y)).toEqual(terms)
}

/** `handover` on three instances of one client; the instances closed after it, then the client (`close`). */
async function handoverThenClose(set: Locks[], close: () => Promise<void>): Promise<void> {
  try {
    await handover(set[0]!, set[1]!, set[2]!, 'leader')
  } finally {
    await closeQuietly(set)
    await close()
  }
}

describe.skipIf(!requireRedisOrSkip())('election on every topology', () => {
  describe('replicas (WAIT)', () => {
    const pair = useReplicated()
    describe.each(adapters)('$name', (adapter) => {
      it('hands over in order, each term acknowledged by the replica', async () => {
        const client = await adapter.connect(pair.primary.url)
        const options: LocksOptions = { redis: client.raw, prefix: uniquePrefix('el-repl'), replicas: { count: 1, timeout: 300 } }
        const set = [createLocks(options), createLocks(options), createLocks(options)]
        await handoverThenClose(set, () => client.quit())
      })
    })
  })

  describe('Redis Cluster', () => {
    const cluster = useCluster({ masters: 3 })
    describe.each(clusterAdapters)('$name', (adapter) => {
      it('hands over in order on the slot of the election', async () => {
        const client = await adapter.connect(cluster)
        const prefix = uniquePrefix('el-cluster')
        const set = [0, 1, 2].map(() => createLocks({ redis: client.raw, prefix }))
        await handoverThenClose(set, () => client.close())
      })
    })
  })

  quorumPerAdapter('quorum of 3', QUORUM_MAX_TTL, (open, quorum) => {
    it('hands over in order; the leader is the one a majority holds, also with a node down', async () => {
      const prefix = uniquePrefix('el-quorum')
      const { nodes } = quorum
      const set = [await open(prefix), await open(prefix), await open(prefix)]
      try {
        await handover(set[0]!, set[1]!, set[2]!, 'leader')
        nodes[2]!.pause()
        try {
          const term = await set[0]!.election('down', { ttl: 1_000 }).campaign('one-down')
          expect(await set[1]!.election('down').leader()).toMatchObject({ value: 'one-down', fence: term.fence })
          await term.resign()
        } finally {
          nodes[2]!.resume()
        }
      } finally {
        await closeQuietly(set)
      }
    })
  })
})
