// Network partitions made in the kernel, not by a proxy: Redis runs in a network namespace of its
// own, and a qdisc on both ends of the veth link drops every packet, so TCP connections stay open,
// retransmit, and recover when the link heals (as when a cable or a switch fails).
// DESIGN.md 7 (holder cut off: alone, and from a quorum's majority) and 10 (a waiter that missed
// the release still gets the lock within a ttl once it can talk to Redis again).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type Lease, type LockLostError, type Locks } from '../../src/index.js'
import { adapters, type TestClient } from '../../harness/clients.js'
import { createNetnsHost, requireNetnsOrSkip, type NetnsHost } from '../../harness/netns.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { record } from '../../harness/telemetry.js'
import { closeQuietly, keysOf, sleep, uniquePrefix, until } from '../../harness/util.js'

const lostAt = (lease: Lease) =>
  new Promise<{ at: number; reason: string | undefined; cause: unknown }>((resolve) =>
    lease.signal.addEventListener(
      'abort',
      () => resolve({ at: performance.now(), reason: (lease.signal.reason as LockLostError).reason, cause: (lease.signal.reason as LockLostError).cause }),
      { once: true },
    ),
  )

describe.skipIf(!requireRedisOrSkip() || !requireNetnsOrSkip())('partitions in the kernel (network namespace, every packet dropped)', () => {
  let host: NetnsHost
  let server: { url: string; stop(): Promise<void> }
  beforeAll(async () => {
    host = await createNetnsHost()
    server = await host.startRedis()
  })
  afterAll(async () => {
    await host?.destroy()
  })

  describe.each(adapters)('$name', (adapter) => {
    let clients: TestClient[] = []
    let instances: Locks[] = []
    const extensions = record('fencelock:extend')
    afterAll(() => extensions.stop())
    afterEach(async () => {
      host.heal()
      await closeQuietly(instances)
      await Promise.all(clients.map((c) => c.disconnect()))
      clients = []
      instances = []
    })
    const open = async (prefix: string, ttl: number): Promise<Locks> => {
      const client = await adapter.connect(server.url)
      clients.push(client)
      const locks = createLocks({ redis: client.raw, prefix, ttl })
      instances.push(locks)
      return locks
    }

    it('7. holder cut off while auto-extending: its signal aborts by its deadline; after the heal a rival gets a larger fence and the old release leaves it alone', async () => {
      const prefix = uniquePrefix('netns-cut')
      const locks = await open(prefix, 900)
      const rival = await open(prefix, 900)
      const lease = await locks.acquire('cut', { autoExtend: true })
      const lost = lostAt(lease)
      await until('one renewal went through', () => extensions.events.some((e) => e.token === lease.token && e.outcome === 'extended'))
      host.cut()
      const { at, reason } = await lost
      // Promise 2: aborted by its deadline. The expiry timer's own lateness on a loaded machine is
      // the only slack (expected: a few ms; 300 ms is more than 10x that).
      expect(at).toBeLessThanOrEqual(lease.deadline + 300)
      expect(reason).toBe('unreachable') // its renewal was waiting for the cut-off Redis
      host.heal()
      const next = await rival.acquire('cut', { wait: 8_000 })
      expect(next.fence).toBeGreaterThan(lease.fence)
      expect(await lease.release().catch(() => false)).toBe(false)
      expect((await rival.inspect('cut')).token).toBe(next.token)
      expect(await next.release()).toBe(true)
    }, 30_000)

    it("10. a waiter cut off while the holder's lease ran out gets the lock within a ttl after the heal", async () => {
      const prefix = uniquePrefix('netns-wait')
      const locks = await open(prefix, 1_000)
      const rival = await open(prefix, 1_000)
      const holder = await locks.acquire('wait') // never released: it expires during the cut
      // Promise 10: within a ttl (1 s) once it can talk to Redis again. No event of ours says when
      // the link carries packets again (TCP retransmits on its own backoff), so the bound is the
      // wait itself: 10 s, 10x the ttl; a waiter that missed the lock's end times out instead.
      const waiting = rival.acquire('wait', { wait: 10_000 })
      const channels = async () => ((await clients[0]!.command('PUBSUB', 'CHANNELS', `${keysOf(prefix, 'wait').channel}:*`)) as string[]).length
      await until('the waiter queued and subscribed', async () => (await locks.inspect('wait')).waiters === 1 && (await channels()) === 1)
      host.cut()
      await sleep(1_500) // time must pass: the holder's lease (1 s) runs out during the cut
      host.heal()
      const next = await waiting
      expect(next.fence).toBeGreaterThan(holder.fence)
      // The new lease first, while it is valid (1 s): the holder's connection crossed the cut and
      // may still be in TCP's retransmission backoff, and its release can take longer than that.
      expect(await next.release()).toBe(true)
      expect(await holder.release()).toBe(false)
    }, 30_000)
  })

  describe('quorum of 3, two nodes behind the link', () => {
    let local: RedisProcess
    let clients: TestClient[] = []
    let locks: Locks | undefined
    beforeAll(async () => {
      local = await startRedis()
    })
    afterAll(async () => {
      host?.heal()
      await closeQuietly([locks])
      await Promise.all(clients.map((c) => c.disconnect()))
      await local?.stop()
    })

    it('7. holder cut off from the majority: its signal aborts well before its local deadline', async () => {
      const ioredis = adapters.find((a) => a.name === 'ioredis')!
      const remote = [server, await host.startRedis()]
      clients = await Promise.all([local.url, ...remote.map((r) => r.url)].map((url) => ioredis.connect(url)))
      // A node counts once it has been up for maxTtl: wait that long after starting the last one.
      locks = createLocks({ redis: clients.map((c) => c.raw), prefix: uniquePrefix('netns-quorum'), maxTtl: 3_000, ttl: 3_000 })
      await until(
        'every node has been up for maxTtl (a younger one does not count)',
        async () =>
          (await Promise.all(clients.map(async (c) => Number(/uptime_in_seconds:(\d+)/.exec(String(await c.command('INFO', 'server')))?.[1])))).every(
            (up) => up * 1000 >= 3_000,
          ),
        { timeout: 10_000, every: 100 },
      )
      const lease = await locks.acquire('cut-quorum', { autoExtend: true, wait: 5_000 })
      const lost = lostAt(lease)
      host.cut()
      const { at, reason, cause } = await lost
      // The next renewal (a third of the ttl in) cannot reach a majority: the lease is given up
      // then, told by the quorum's failed renewal, not at the deadline about two seconds later.
      expect(reason).toBe('unreachable')
      expect(cause).toMatchObject({ name: 'QuorumError' })
      expect(at).toBeLessThan(lease.deadline - 500)
      host.heal()
    }, 30_000)
  })
})
