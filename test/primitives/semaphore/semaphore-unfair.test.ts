import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, InvalidArgumentError, type Lease, type Locks } from '../../../src/index.js'
import { MAX_PASSES } from '../../../src/primitives/semaphore/semaphore.js'
import { adapters } from '../../../harness/clients.js'
import { everyCluster } from '../../../harness/cluster-clients.js'
import { describeRedis, perAdapter, quorumPerAdapter, useClient, useFaultProxy } from '../../../harness/per-adapter.js'
import { requireRedisOrSkip, startCluster, startRedis, type RedisCluster, type RedisProcess } from '../../../harness/redis-server.js'
import { recordAcquires } from '../../../harness/telemetry.js'
import { closeQuietly, uniquePrefix, until } from '../../../harness/util.js'

const QUORUM_MAX_TTL = 2_000
// A woken waiter keeps its place this long unless it comes: long enough that a loaded machine does
// not take the place of the waiter these tests count passes against (a new place is a new count).
const GRACE = 10_000

/**
 * The releaser asks again at once, round after round, while another instance waits in line: the
 * waiter is served within `passes` + 1 releases (each release wakes it; the releaser passes it at
 * most `passes` times), woken by releases, never by a re-check; one permit held at a time.
 */
async function releaserPasses(a: Locks, b: Locks, name: string, ttl: number, passes = MAX_PASSES): Promise<void> {
  const acquires = recordAcquires()
  try {
    const pool = a.semaphore(name, { limit: 1, fair: false })
    let held = await pool.acquire({ ttl })
    const waiting = b.semaphore(name, { limit: 1, fair: false }).acquire({ ttl, wait: 8_000 })
    await until('the waiter in line', async () => (await pool.inspect()).waiters === 1, { timeout: 3_000 })
    let releases = 0
    let theirs: Lease | undefined
    let again: Promise<Lease> | undefined
    while (!theirs) {
      expect(await held.release()).toBe(true)
      releases++
      again = pool.acquire({ ttl, wait: 8_000 })
      const next = await Promise.race([again.then((lease) => ({ mine: lease })), waiting.then((lease) => ({ theirs: lease }))])
      expect((await pool.inspect()).held).toBe(1)
      if ('theirs' in next) theirs = next.theirs
      else held = next.mine
    }
    expect(releases, `served within ${passes} passes`).toBeLessThanOrEqual(passes + 1)
    expect(acquires.of(name).find((e) => e.token === theirs.token)!.wakes).not.toContain('recheck')
    // The releaser's last acquire, refused, waits in line behind nobody now: the release serves it.
    expect(await theirs.release()).toBe(true)
    const mine = await again!
    expect(mine.fence).toBeGreaterThan(theirs.fence)
    await mine.release()
    expect((await pool.inspect()).held).toBe(0)
  } finally {
    acquires.stop()
  }
}

/**
 * Limit 3, a waiter for 3 in line while 1 permit is free: 1-permit newcomers pass it MAX_PASSES
 * times, then are refused with the permit free; once all 3 are free it is served, woken by a release.
 */
async function heavyWaiterServed(a: Locks, b: Locks, name: string, ttl: number): Promise<void> {
  const acquires = recordAcquires()
  try {
    const pool = a.semaphore(name, { limit: 3, fair: false })
    const held = [await pool.acquire({ ttl }), await pool.acquire({ ttl }), await pool.acquire({ ttl })]
    const heavy = b.semaphore(name, { limit: 3, fair: false }).acquire({ permits: 3, ttl, wait: 8_000 })
    await until('the waiter for 3 in line', async () => (await pool.inspect()).waiters === 1, { timeout: 3_000 })
    await held.pop()!.release()
    for (let pass = 1; pass <= MAX_PASSES; pass++) {
      const lease = await pool.tryAcquire({ ttl })
      expect(lease, `pass ${pass}: a newcomer for 1 takes the free permit`).not.toBeNull()
      await lease!.release()
    }
    expect(await pool.tryAcquire({ ttl }), 'passed enough: the line goes first').toBeNull()
    expect((await pool.inspect()).held).toBe(2)
    await Promise.all(held.map((l) => l.release()))
    const got = await heavy
    expect(got.token).toMatch(/@0,1,2$/)
    // Woken by an event: the release's message (or its look once its channel was active, where that came after the release).
    expect(['release', 'subscribed']).toContain(
      acquires
        .of(name)
        .find((e) => e.token === got.token)!
        .wakes.at(-1),
    )
    await got.release()
    // The waiter first in line was served: newcomers may pass again.
    const after = (await pool.tryAcquire({ ttl }))!
    expect(after).not.toBeNull()
    await after.release()
  } finally {
    acquires.stop()
  }
}

/** Instances on one pool, each taking and giving back permits at once: never more than the limit inside. */
async function crowd(set: Locks[], name: string, ttl: number): Promise<void> {
  const limit = 2
  let inside = 0
  let most = 0
  await Promise.all(
    set.map(async (locks) => {
      const pool = locks.semaphore(name, { limit, fair: false })
      for (let i = 0; i < 15; i++) {
        await pool.withPermit(
          async () => {
            most = Math.max(most, ++inside)
            await new Promise((resolve) => setImmediate(resolve))
            inside--
          },
          { ttl, wait: 20_000 },
        )
      }
    }),
  )
  expect(most).toBeLessThanOrEqual(limit)
  expect((await set[0]!.semaphore(name, { limit, fair: false }).inspect()).held).toBe(0)
}

describeRedis('semaphore, fair: false', (server) => {
  perAdapter(
    server,
    (t) => {
      let n = 0
      const name = (base: string) => `${base}-${++n}`

      it('the releaser asking again passes the waiter in line at most MAX_PASSES times; the waiter is woken by releases', async () => {
        await releaserPasses(t.locks, t.other, name('passes'), 5_000)
      })

      it('a waiter for 3 permits is passed by 1-permit newcomers at most MAX_PASSES times, then served', async () => {
        await heavyWaiterServed(t.locks, t.other, name('heavy'), 5_000)
      })

      it('four instances: never more than the limit held', async () => {
        await crowd([t.locks, t.other, t.open(), t.open()], name('crowd'), 5_000)
      })

      it('checks `fair`: a boolean, the same for one name in one instance', () => {
        for (const bad of ['no', 0, null]) {
          expect(() => t.locks.semaphore(name('bad'), { limit: 2, fair: bad as unknown as boolean })).toThrow(InvalidArgumentError)
        }
        expect(() => t.locks.semaphore(name('bad'), { limit: 2, fair: 'no' as unknown as boolean })).toThrow('Expected `fair` to be a boolean, got "no"')
        const pool = t.locks.semaphore(name('same'), { limit: 2, fair: false })
        expect(pool.fair).toBe(false)
        expect(() => t.locks.semaphore(pool.name, { limit: 2 })).toThrow(
          `Semaphore "${pool.name}" was already made with fair: false in this instance, got fair: true`,
        )
        expect(t.other.semaphore(pool.name, { limit: 2 }).fair, 'another instance decides for itself').toBe(true)
      })
    },
    { prefix: 'sem-unfair', locks: { waiterGrace: GRACE } },
  )
})

describeRedis('semaphore, fair: false, against a waiter that cannot come yet', (server) => {
  const proxy = useFaultProxy(server)

  describe.each(adapters)('$name', (adapter) => {
    const t = useClient(adapter, server, { prefix: 'sem-pass', locks: { waiterGrace: 5_000, ttl: 10_000 } })
    const slow = useClient(adapter, proxy, { end: 'disconnect' }) // through the proxy
    afterEach(() => proxy.heal())

    it('a free permit goes to whoever asks first, MAX_PASSES times; then the line goes first; fair callers keep to the line', async () => {
      const ahead = slow.open({ prefix: t.prefix, waiterGrace: 5_000, ttl: 10_000 })
      const pool = t.locks.semaphore('pass', { limit: 1, fair: false })
      let holder = await pool.acquire()
      const first = ahead.semaphore('pass', { limit: 1, fair: false }).acquire({ wait: 15_000 })
      await until('the first waiter is in line', async () => (await pool.inspect()).waiters === 1, { timeout: 3_000 })
      proxy.hang()
      for (let pass = 1; pass <= MAX_PASSES; pass++) {
        expect(await holder.release()).toBe(true)
        // A caller who keeps to the line is refused, a fair: false one takes the permit.
        if (pass === 1) expect(await t.other.semaphore('pass', { limit: 1 }).tryAcquire()).toBeNull()
        const next = await pool.tryAcquire()
        expect(next, `pass ${pass}`).not.toBeNull()
        holder = next!
      }
      expect(await t.client.command('ZCARD', `${t.prefix}{pass}:S:Q`), 'the waiter keeps its place').toBe(1)
      expect(await holder.release()).toBe(true)
      expect(await pool.tryAcquire(), 'passed MAX_PASSES times: the line goes first').toBeNull()
      proxy.heal()
      const served = await first
      expect(served.fence).toBeGreaterThan(holder.fence)
      expect(await t.client.command('EXISTS', `${t.prefix}{pass}:S:P`), 'served: the count starts again').toBe(0)
      await served.release()
    })
  })
})

describe.skipIf(!requireRedisOrSkip())('semaphore, fair: false, on every topology', () => {
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
      it('passes bounded, heavy waiter served, never more than the limit', async () => {
        const client = await adapter.connect(primary.url)
        const options = { redis: client.raw, prefix: uniquePrefix('su-repl'), replicas: { count: 1, timeout: 300 }, waiterGrace: GRACE }
        await allThenClose([createLocks(options), createLocks(options)], 5_000, () => client.quit())
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
      it('passes bounded, heavy waiter served, never more than the limit', async () => {
        const client = await connect(adapter.name)
        const prefix = uniquePrefix('su-cluster')
        const options = { redis: client.raw, prefix, waiterGrace: GRACE }
        await allThenClose([createLocks(options), createLocks(options)], 5_000, () => client.close())
      })
    })
  })

  quorumPerAdapter('quorum of 3', QUORUM_MAX_TTL, (open) => {
    it('passes bounded, heavy waiter served, never more than the limit', async () => {
      const prefix = uniquePrefix('su-quorum')
      // Each node counts its own passes and a pass needs a majority: where the nodes' counts differ
      // (a race won on one node, lost on the others) a waiter with its place on all 3 is passed at
      // most MAX_PASSES x 3 / 2 times, with its place on 2 of them (an attempt that did not reach
      // the third within the node timeout) at most MAX_PASSES x 2.
      await allThenClose([await open(prefix), await open(prefix)], QUORUM_MAX_TTL, undefined, MAX_PASSES * 2)
    })
  })
})

/** The three checks above on two instances of one topology, which are closed after them (and then `close`, their client). */
async function allThenClose(set: Locks[], ttl: number, close: () => Promise<void> = async () => {}, passes = MAX_PASSES): Promise<void> {
  try {
    await releaserPasses(set[0]!, set[1]!, 'passes', ttl, passes)
    await heavyWaiterServed(set[0]!, set[1]!, 'heavy', ttl)
    await crowd(set, 'crowd', ttl)
  } finally {
    await closeQuietly(set)
    await close()
  }
}
