// Quorum mode on nodes that started (or restarted) less than maxTtl ago: they do not count yet, and
// a caller that cannot get a lock because of that is told so (issue 10, item 4), with when each
// node will count, instead of a LockTimeoutError that reads as contention.
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, QuorumError, type Locks } from '../../../src/index.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../../harness/redis-server.js'

const MAX_TTL = 20_000 // fresh servers stay "restarting" for the whole test

describe.skipIf(!requireRedisOrSkip())('quorum on freshly started nodes', () => {
  let servers: RedisProcess[] = []
  let clients: Redis[] = []
  let locks: Locks
  beforeAll(async () => {
    servers = await Promise.all([0, 1, 2].map(() => startRedis()))
    clients = servers.map((s) => new Redis(s.url))
    // Connected before the first request: a node still being connected to when that request's
    // 250 ms node timeout runs out (a loaded machine) would vote timeout instead of restarting.
    await Promise.all(clients.map((c) => c.ping()))
    locks = createLocks({ redis: clients, maxTtl: MAX_TTL, ttl: 5_000, quorum: { nodeTimeout: 250 } })
  })
  afterAll(async () => {
    await locks?.close()
    for (const c of clients) c.disconnect()
    await Promise.all(servers.map((s) => s.stop()))
  })

  const expectRestarting = (err: unknown) => {
    expect(err).toBeInstanceOf(QuorumError)
    const q = err as QuorumError
    // A node whose reply was not awaited (the outcome was decided without it) shows as timeout.
    const restarting = q.votes.filter((v) => v.outcome === 'restarting')
    expect(restarting.length, JSON.stringify(q.votes)).toBeGreaterThanOrEqual(2)
    expect(q.votes.filter((v) => v.outcome !== 'restarting' && v.outcome !== 'timeout')).toEqual([])
    for (const v of restarting) {
      expect(v.countsIn, `node ${v.node}: ms until it counts`).toBeGreaterThan(0)
      expect(v.countsIn).toBeLessThanOrEqual(MAX_TTL)
    }
    expect(q.message).toMatch(/restart/)
    expect(q.message).toMatch(/maxTtl/)
  }

  it('acquire with a wait ends in QuorumError whose votes say restarting and when each node counts', async () => {
    const started = performance.now()
    const err = await locks.acquire('fresh', { wait: 600 }).catch((e: unknown) => e)
    expectRestarting(err)
    // Promise 3: every wait has a deadline (600 ms); the nodes count only in 20 s; 10x margin.
    expect(performance.now() - started).toBeLessThan(6_000)
  })

  it('tryAcquire and acquire with wait 0 throw the same QuorumError instead of answering "held"', async () => {
    expectRestarting(
      await locks.tryAcquire('fresh-try').then(
        (v) => v,
        (e: unknown) => e,
      ),
    )
    expectRestarting(await locks.acquire('fresh-zero', { wait: 0 }).catch((e: unknown) => e))
  })
})
