// One queue order on every node: a waiter's place carries the same score on each node of a quorum,
// from its first attempt on, also for the first waiter of a process that has not yet seen any
// server TIME. With each node scoring such a waiter by its own clock, the nodes ordered the waiters
// differently (node 0: A B C, node 1: B C A, node 2: C A B): each waiter first on one node only, each
// attempt won one node and was undone, and all-or-nothing transfers on a quorum stalled for good
// (issue 45; model/quorum-queue.pml shows the cycle).
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type Lease, type Locks } from '../../../src/index.js'
import { mature, requireRedisOrSkip, startRedis, type RedisProcess } from '../../../harness/redis-server.js'
import { until } from '../../../harness/until.js'

const MAX_TTL = 1_000

describe.skipIf(!requireRedisOrSkip())('quorum queue order', () => {
  let servers: RedisProcess[] = []
  const clients: Redis[] = []
  const instances: Locks[] = []
  /** A createLocks instance on connections of its own (a fresh process's view: no server TIME seen yet). */
  const fresh = (): Locks => {
    const raw = servers.map((s) => new Redis(s.url))
    clients.push(...raw)
    const locks = createLocks({ redis: raw, maxTtl: MAX_TTL, ttl: MAX_TTL, quorum: { nodeTimeout: 250 } })
    instances.push(locks)
    return locks
  }
  /** Each node's queue of `resource`: waiter -> score. */
  const queues = (resource: string) =>
    Promise.all(
      servers.map(async (s) => {
        const flat = (await s.cli('ZRANGE', `fencelock:{${resource}}:Q`, '0', '-1', 'WITHSCORES')).split('\n').filter(Boolean)
        return new Map(Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i]!, flat[2 * i + 1]!]))
      }),
    )

  /**
   * Each node's queue of each resource, taken once `count` waiters stand in every one of them.
   * Fresh instances connect and take their places with 250 ms node timeouts: seconds on a loaded
   * machine (over 5 in CI on 7 Dec 2026). The lines are read in one go, when all are full: a place
   * that outlived its grace on a late re-check is pruned on one node and taken again (with the
   * same score) a moment later, so lines read one after another may catch one mid-way (CI, 7 Dec
   * 2026: acct:2 empty on node 0 right after acct:1 was full there). Should the holder's lease run
   * out first, the waiters would take the lock and the lines never fill: said as such, not as a
   * timeout.
   */
  const inLine = async (holder: Lease, resources: string[], count: number) => {
    let lines: Map<string, string>[][] = []
    await until(
      `${count} waiters in line for ${resources.join(', ')} on every node`,
      async () => {
        expect(holder.held, 'the holder still holds the lock (else the lines empty)').toBe(true)
        lines = await Promise.all(resources.map(queues))
        return lines.every((nodes) => nodes.every((q) => q.size === count))
      },
      { timeout: 20_000 },
    )
    return lines
  }

  beforeAll(async () => {
    servers = await Promise.all([0, 1, 2].map(() => startRedis()))
    await mature(servers, MAX_TTL)
  })

  afterAll(async () => {
    for (const locks of instances) await locks.close()
    for (const c of clients) c.disconnect()
    await Promise.all(servers.map((s) => s.stop()))
  })

  it("a process's first waiter stands in line with one score on every node", { timeout: 60_000 }, async () => {
    // Auto-extended: the lock stays held until the waiters are in line, however long a loaded
    // machine takes to get them there (a 1 s lease could run out first and empty the lines).
    const holder = await fresh().acquire('order', { ttl: MAX_TTL, autoExtend: true })
    const waiters = [fresh(), fresh(), fresh()]
    const waiting = waiters.map((locks) => locks.acquire('order', { wait: 10_000 }))
    for (const w of waiting) w.catch(() => {}) // a failed check closes them while they wait
    const [first, ...rest] = (await inLine(holder, ['order'], 3))[0]!
    for (const queue of rest) expect(queue, 'the same waiters with the same scores as node 0').toEqual(first)
    await holder.release()
    for (const lease of await Promise.all(waiting)) await lease.release()
  })

  it("a process's first all-or-nothing waiter stands in every queue with one score on every node", { timeout: 60_000 }, async () => {
    const holder = await fresh().acquireAll(['acct:1', 'acct:2'], { ttl: MAX_TTL, autoExtend: true })
    const waiters = [fresh(), fresh()]
    const waiting = waiters.map((locks, i) => locks.acquireAll(i === 0 ? ['acct:1', 'acct:2'] : ['acct:2', 'acct:1'], { wait: 10_000 }))
    for (const w of waiting) w.catch(() => {}) // a failed check closes them while they wait
    const resources = ['acct:1', 'acct:2']
    const lines = await inLine(holder, resources, 2)
    resources.forEach((resource, i) => {
      const [first, ...rest] = lines[i]!
      for (const queue of rest) expect(queue, `${resource}: the same scores as node 0`).toEqual(first)
    })
    await holder.release()
    for (const lease of await Promise.all(waiting)) await lease.release()
  })
})
