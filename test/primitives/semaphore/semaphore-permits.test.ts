import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, InvalidArgumentError, type Lease, type Locks } from '../../../src/index.js'
import { adapters } from '../../../harness/clients.js'
import { everyCluster } from '../../../harness/cluster-clients.js'
import { describeRedis, perAdapter, quorumPerAdapter } from '../../../harness/per-adapter.js'
import { requireRedisOrSkip, startCluster, startRedis, type RedisCluster, type RedisProcess } from '../../../harness/redis-server.js'
import { recordAcquires } from '../../../harness/telemetry.js'
import { closeQuietly, sleep, uniquePrefix, until } from '../../../harness/util.js'

const QUORUM_MAX_TTL = 2_000

/** All or none, FIFO against 1-permit newcomers, one fence, inspect, extend and release by token. */
async function weighted(a: Locks, b: Locks, name: string, ttl: number): Promise<void> {
  const acquires = recordAcquires()
  try {
    const pool = a.semaphore(name, { limit: 5 })
    const theirs = b.semaphore(name, { limit: 5 })
    const big = await pool.acquire({ permits: 3, ttl })
    expect(big.token).toMatch(/@0,1,2$/)
    expect(await theirs.tryAcquire({ permits: 3 }), 'only 2 are free').toBeNull()
    const ones = [await theirs.acquire({ ttl }), (await pool.tryAcquire({ permits: 1, ttl }))!]
    expect(ones[1]).not.toBeNull()
    expect(ones[0]!.fence).toBeGreaterThan(big.fence)
    let info = await pool.inspect()
    expect(info.held).toBe(5)
    expect(info.permits.find((p) => p.token === big.token)).toMatchObject({ permits: 3 })
    expect(info.permits.filter((p) => p.permits === 1)).toHaveLength(2)

    // A waiter for 3 queues first; then 2 permits are freed: a newcomer for 1 must not take one.
    const waiting = theirs.acquire({ permits: 3, ttl, wait: 8_000 })
    await until('the waiter for 3 in line', async () => (await pool.inspect()).waiters === 1, { timeout: 3_000 })
    await Promise.all(ones.map((l) => l.release()))
    // Time must pass: the release wakes the waiter for 3, which looks again (and is refused: 2 are
    // free); a newcomer must not overtake it then either, and no event says when it has looked.
    await sleep(100)
    expect(await pool.tryAcquire(), 'a newcomer for 1 overtakes the waiter for 3').toBeNull()
    expect(await b.semaphore(name, { limit: 5 }).tryAcquire({ permits: 2 })).toBeNull()

    // The big lease extends and releases as one; the waiter gets its 3 at once (woken, not polling).
    expect(await big.extend(ttl)).toBeUndefined()
    expect(await pool.extend(big.token, ttl)).toBe(true)
    expect(await pool.release(big.token)).toBe(true)
    const got = await waiting
    // Woken by the release's message, not by a re-check at the holders' ttl.
    const wakes = acquires.of(name).find((e) => e.token === got.token)!.wakes
    // (or its look once its channel was active, where that came after the release: also an event)
    expect(['release', 'subscribed']).toContain(wakes.at(-1))
    expect(wakes).not.toContain('recheck')
    expect(got.fence).toBeGreaterThan(big.fence)
    info = await pool.inspect()
    expect(info.held).toBe(3)
    // One lease of 3 permits, with who holds it since when (the same for each of its slots).
    const recorded = { holder: expect.any(String), since: expect.any(Number), lastExtended: expect.any(Number) }
    expect(info.permits).toEqual([{ token: got.token, ttl: expect.any(Number), permits: 3, ...recorded }])
    const rest = (await pool.tryAcquire({ permits: 2, ttl }))!
    expect(rest).not.toBeNull()
    expect(await pool.tryAcquire()).toBeNull()
    expect(await theirs.release(got.token)).toBe(true)
    expect(await got.release()).toBe(false)
    await rest.release()
    expect((await pool.inspect()).held).toBe(0)
  } finally {
    acquires.stop()
  }
}

describeRedis('semaphore: weighted permits', (server) => {
  perAdapter(
    server,
    (t) => {
      let n = 0
      const name = (base: string) => `${base}-${++n}`

      it('all or none, FIFO with 1-permit newcomers, one fence, inspect, extend and release as one lease', async () => {
        await weighted(t.locks, t.other, name('w'), 5_000)
      })

      it('a lease of n permits that is not extended expires as one; withPermit takes n and gives them back', async () => {
        const pool = t.locks.semaphore(name('expire'), { limit: 3 })
        const lease = await pool.acquire({ permits: 3, ttl: 300 })
        await until('its signal aborts', () => lease.signal.aborted, { timeout: 2_000 })
        await until('its slots expire on the server', async () => (await pool.inspect()).held === 0, { timeout: 2_000 })
        const seen = await pool.withPermit(
          async (permit) => {
            const info = await pool.inspect()
            expect(await t.other.semaphore(pool.name, { limit: 3 }).tryAcquire({ permits: 2 })).toBeNull()
            return [permit.token, info.held] as const
          },
          { permits: 2 },
        )
        expect(seen[1]).toBe(2)
        expect(seen[0]).toMatch(/@0,1$/)
        expect((await pool.inspect()).held).toBe(0)
      })

      it('bad counts get a typed error naming the value', async () => {
        const pool = t.locks.semaphore(name('bad'), { limit: 3 })
        for (const bad of [0, 4, 1.5, -1, '2', null, Number.NaN]) {
          await expect(pool.acquire({ permits: bad as number })).rejects.toThrow(InvalidArgumentError)
          await expect(pool.tryAcquire({ permits: bad as number })).rejects.toThrow(/`permits` to be an integer from 1 to the limit 3/)
          await expect(pool.withPermit(() => 1, { permits: bad as number })).rejects.toThrow(InvalidArgumentError)
        }
        await expect(pool.acquire({ permits: 4 })).rejects.toThrow(/got 4/)
        await expect(pool.acquire({ permits: '2' as unknown as number })).rejects.toThrow(/got "2"|got '2'|string/)
        expect((await pool.inspect()).held).toBe(0)
      })

      it('1-permit and n-permit holders of one process count against one limit', async () => {
        const pool = t.locks.semaphore(name('mixed'), { limit: 4 })
        const held: Lease[] = [await pool.acquire({ permits: 2 }), await pool.acquire(), await pool.acquire()]
        expect(await pool.tryAcquire()).toBeNull()
        expect(await pool.tryAcquire({ permits: 2 })).toBeNull()
        await held[1]!.release()
        expect(await pool.tryAcquire({ permits: 2 })).toBeNull()
        const last = (await pool.tryAcquire())!
        expect(last).not.toBeNull()
        await Promise.all([held[0]!.release(), held[2]!.release(), last.release()])
      })
    },
    { prefix: 'sem-w' },
  )
})

/** `weighted` on the pool of two instances, which are closed after it (and then `close`, their client). */
async function weightedThenClose(set: Locks[], ttl: number, close: () => Promise<void> = async () => {}): Promise<void> {
  try {
    await weighted(set[0]!, set[1]!, 'pool', ttl)
  } finally {
    await closeQuietly(set)
    await close()
  }
}

describe.skipIf(!requireRedisOrSkip())('semaphore: weighted permits on every topology', () => {
  describe('replicas (WAIT)', () => {
    let primary: RedisProcess
    let replica: RedisProcess
    beforeAll(async () => {
      primary = await startRedis({ args: ['--repl-diskless-sync-delay', '0'] })
      replica = await startRedis({ args: ['--replicaof', primary.host, String(primary.port)] })
      await until('the replica linked', async () => (await replica.cli('INFO', 'replication')).includes('master_link_status:up'), {
        timeout: 10_000,
        every: 50,
      })
    })
    afterAll(async () => {
      await Promise.all([replica?.kill9(), primary?.kill9()])
    })
    describe.each(adapters)('$name', (adapter) => {
      it('all or none, FIFO, one lease', async () => {
        const client = await adapter.connect(primary.url)
        const options = { redis: client.raw, prefix: uniquePrefix('sw-repl'), replicas: { count: 1, timeout: 300 } }
        await weightedThenClose([createLocks(options), createLocks(options)], 5_000, () => client.quit())
      })
    })
  })

  describe('Redis Cluster', () => {
    let cluster: RedisCluster
    beforeAll(async () => {
      cluster = await startCluster({ masters: 3 })
    })
    afterAll(() => cluster?.stop())
    /** The cluster client of the adapter (harness/cluster-clients.ts), connected and ready. */
    const connect = (name: string) => everyCluster.find((c) => c.name === name)!.connect(cluster)
    describe.each(adapters)('$name', (adapter) => {
      it('all or none, FIFO, one lease, on the slot of the semaphore', async () => {
        const client = await connect(adapter.name)
        const prefix = uniquePrefix('sw-cluster')
        await weightedThenClose([createLocks({ redis: client.raw, prefix }), createLocks({ redis: client.raw, prefix })], 5_000, () => client.close())
      })
    })
  })

  quorumPerAdapter('quorum of 3', QUORUM_MAX_TTL, (open) => {
    it('all or none, FIFO, one lease: a majority holds the same slots', async () => {
      const prefix = uniquePrefix('sw-quorum')
      await weightedThenClose([await open(prefix), await open(prefix)], QUORUM_MAX_TTL)
    })
  })
})
