// Failure scenario 21: an operator revokes a live holder. `revoke` ends the lock in Redis and
// publishes the lease's token on the instance's revocation channel; the holder's instance, which
// listens while it holds leases, aborts the lease's signal with reason 'revoked' at once: before
// its next extension (asserted: no extension was sent), for every primitive and topology. A holder
// that misses the notice learns at its next extension, as before; a revoked holder's fenced write is
// refused once the next holder has claimed its fence.
import { describe, expect, it } from 'vitest'
import { createLocks, fencedSet, LockLostError, type Lease, type Locks } from '../../src/index.js'
import { adapters } from '../../harness/clients.js'
import { clusterAdapters, useClusterLocks } from '../../harness/cluster-clients.js'
import { startConnectionProxy } from '../../harness/conn-proxy.js'
import { perAdapter, quorumPerAdapter, describeRedis, useCluster, useReplicated } from '../../harness/per-adapter.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { record } from '../../harness/telemetry.js'
import { closeQuietly, uniquePrefix, until } from '../../harness/util.js'

const QUORUM_MAX_TTL = 3_000

/** Subscribers of a channel, summed over the nodes asked (classic pub/sub counts per node). */
type Numsub = () => Promise<number>

/** `PUBSUB NUMSUB channel` on a client. */
const numsubOf =
  (command: (...args: string[]) => Promise<unknown>, channel: string): Numsub =>
  async () =>
    Number(((await command('PUBSUB', 'NUMSUB', channel)) as (string | number)[])[1])

/** `PUBSUB NUMSUB channel` on each of `nodes` (through redis-cli), summed. */
const numsubOnNodes =
  (nodes: readonly RedisProcess[], channel: string): Numsub =>
  async () => {
    let total = 0
    for (const node of nodes) total += Number((await node.cli('PUBSUB', 'NUMSUB', channel)).split('\n').at(-1))
    return total
  }

/**
 * Revokes `lease` through `revoke` once its instance listens (`listeners` subscribers of the
 * channel) and asserts the holder heard it at once: its signal aborts with 'revoked', and no
 * extension of it went out (the first is due a third of its ttl after the acquire: 10 s for 30 s,
 * 1 s in quorum mode, whose maxTtl is 3 s; hearing it takes milliseconds).
 */
async function expectHeard(lease: Lease, revoke: () => Promise<readonly string[]>, numsub: Numsub, listeners = 1): Promise<void> {
  const extensions = record('fencelock:extend')
  try {
    await until('the holder listens for revocations', async () => (await numsub()) >= listeners)
    expect(await revoke()).toEqual([lease.token])
    await until('the holder hears the revocation', () => lease.signal.aborted)
    const lost = lease.signal.reason as LockLostError
    expect(lost).toBeInstanceOf(LockLostError)
    expect(lost.reason).toBe('revoked')
    expect(lease.held).toBe(false)
    expect(extensions.events.filter((e) => e.token === lease.token)).toEqual([])
    // The holder's own release afterwards finds nothing to give back (another may hold it now).
    expect(await lease.release()).toBe(false)
  } finally {
    extensions.stop()
  }
}

/** Every primitive's revocation on one pair of instances (`holder`, `operator`), as `expectHeard` checks it. */
function everyPrimitive(
  instances: () => { holder: Locks; operator: Locks; numsub: (channel: string) => Numsub; prefix: string; listeners?: number },
  ttl = 30_000,
): void {
  // The first extension is due a third of the ttl after the acquire: the revocation must come first.
  const held = { ttl, autoExtend: true }
  const channel = (prefix: string) => `${prefix}revoked`
  it('a mutex', async () => {
    const { holder, operator, numsub, prefix, listeners } = instances()
    const lease = await holder.acquire('m', held)
    await expectHeard(lease, () => operator.revoke('m'), numsub(channel(prefix)), listeners)
    expect((await operator.inspect('m')).held).toBe(false)
  })
  it('each permit of a semaphore, weighted or not', async () => {
    const { holder, operator, numsub, prefix, listeners } = instances()
    const one = await holder.semaphore('s', { limit: 4 }).acquire(held)
    const three = await holder.semaphore('s', { limit: 4 }).acquire({ ...held, permits: 3 })
    await expectHeard(three, () => operator.semaphore('s', { limit: 4 }).revoke(three.token), numsub(channel(prefix)), listeners)
    expect(one.held).toBe(true)
    await expectHeard(one, () => operator.semaphore('s', { limit: 4 }).revoke(), numsub(channel(prefix)), listeners)
  })
  it('the writer and each reader of a read/write lock', async () => {
    const { holder, operator, numsub, prefix, listeners } = instances()
    const writer = await holder.readWrite('rw').write(held)
    await expectHeard(writer, () => operator.readWrite('rw').revoke(), numsub(channel(prefix)), listeners)
    const reader = await holder.readWrite('rw').read(held)
    await expectHeard(reader, () => operator.readWrite('rw').revoke(reader.token), numsub(channel(prefix)), listeners)
  })
  it("an election's leader (the next candidate is elected)", async () => {
    const { holder, operator, numsub, prefix, listeners } = instances()
    const term = await holder.election('e').campaign('a', { ttl })
    const next = operator.election('e').campaign('b', { ttl, wait: 10_000 })
    await until('b is in line', async () => (await operator.election('e').inspect()).candidates === 1)
    await expectHeard(term, () => operator.election('e').revoke(), numsub(channel(prefix)), listeners)
    const elected = await next
    expect(elected.fence).toBeGreaterThan(term.fence)
    await elected.resign()
  })
  it('an all-or-nothing lease, by one of its resources', async () => {
    const { holder, operator, numsub, prefix, listeners } = instances()
    const lease = await holder.acquireAll(['{a}1', '{a}2'], held)
    await expectHeard(lease, () => operator.revoke('{a}1'), numsub(channel(prefix)), listeners)
  })
}

describeRedis('revocation on one Redis', (server) => {
  perAdapter(server, (t) => {
    everyPrimitive(() => ({
      holder: t.locks,
      operator: t.other,
      prefix: t.prefix,
      numsub: (channel) => numsubOf((...args) => t.client.command(...args), channel),
    }))

    it('a lease of the revoking instance itself is lost with reason revoked', async () => {
      const lease = await t.locks.acquire('own', { ttl: 30_000 })
      expect(await t.locks.revoke('own')).toEqual([lease.token])
      expect((lease.signal.reason as LockLostError).reason).toBe('revoked')
      expect((await t.locks.inspect('own')).held).toBe(false)
    })

    it('nothing held: nothing revoked; a token that no longer holds: nothing revoked', async () => {
      expect(await t.other.revoke('free')).toEqual([])
      const lease = await t.locks.acquire('gone', { ttl: 30_000 })
      await lease.release()
      expect(await t.other.revoke('gone', lease.token)).toEqual([])
    })

    it("the revoked holder's fenced write is refused once the next holder claimed", async () => {
      const key = `${t.prefix}balance`
      const lease = await t.locks.acquire('acct', { ttl: 30_000 })
      expect(await fencedSet(t.client.raw, key, 'old holder', lease.fence)).toBe(true)
      await until('the holder listens', async () => Number(((await t.client.command('PUBSUB', 'NUMSUB', `${t.prefix}revoked`)) as unknown[])[1]) >= 1)
      await t.other.revoke('acct')
      const next = await t.other.acquire('acct', { ttl: 30_000 })
      expect(await fencedSet(t.client.raw, key, 'next holder', next.fence)).toBe(true)
      await until('the old holder heard it', () => lease.signal.aborted)
      expect(await fencedSet(t.client.raw, key, 'old holder, late', lease.fence)).toBe(false)
      expect(await t.client.command('GET', key)).toBe('next holder')
      await next.release()
    })
  })
})

describe.skipIf(!requireRedisOrSkip())('revocation missed by a holder whose pub/sub connection is cut', () => {
  it.each(adapters)('$name: it learns at its next extension (refused), as before revocations were heard', async (adapter) => {
    const redis = await startRedis()
    // The holder's command connection (accepted first) flows; its pub/sub connection (second) hears nothing for a minute.
    const proxy = await startConnectionProxy(redis)
    proxy.delayReplies(1, 60_000)
    const prefix = uniquePrefix('revoke-missed')
    const holderClient = await adapter.connect(proxy.url)
    const operatorClient = await adapter.connect(redis.url)
    const holder = createLocks({ redis: holderClient.raw, prefix })
    const operator = createLocks({ redis: operatorClient.raw, prefix })
    const extensions = record('fencelock:extend')
    try {
      const lease = await holder.acquire('r', { ttl: 1_500, autoExtend: true })
      await until('the pub/sub connection is open (its SUBSCRIBE unanswered)', () => proxy.connections() >= 2)
      expect(await operator.revoke('r')).toEqual([lease.token])
      await until('the holder learns it', () => lease.signal.aborted, { timeout: 5_000 })
      expect((lease.signal.reason as LockLostError).reason).toBe('refused')
      expect(extensions.events.filter((e) => e.token === lease.token).map((e) => e.outcome)).toEqual(['lost'])
    } finally {
      extensions.stop()
      await closeQuietly([holder, operator])
      await holderClient.disconnect()
      await operatorClient.quit()
      await proxy.close()
      await redis.stop()
    }
  })
})

describe.skipIf(!requireRedisOrSkip())('revocation with replicas (WAIT)', () => {
  const pair = useReplicated()
  describe.each(adapters)('$name', (adapter) => {
    let client: Awaited<ReturnType<typeof adapter.connect>>
    let holder: Locks
    let operator: Locks
    const prefix = uniquePrefix('revoke-replicas')
    it('set up', async () => {
      client = await adapter.connect(pair.primary.url)
      holder = createLocks({ redis: client.raw, prefix, replicas: { count: 1, timeout: 1_000 } })
      operator = createLocks({ redis: client.raw, prefix, replicas: { count: 1, timeout: 1_000 } })
    })
    everyPrimitive(() => ({ holder, operator, prefix, numsub: (channel) => numsubOf((...args) => client.command(...args), channel) }))
    it('tear down', async () => {
      await closeQuietly([holder, operator])
      await client.quit()
    })
  })
})

describe.skipIf(!requireRedisOrSkip())('revocation on a Redis Cluster (a PUBLISH reaches every node)', () => {
  const cluster = useCluster()
  describe.each(clusterAdapters)('$name', (adapter) => {
    const prefix = uniquePrefix('revoke-cluster')
    const c = useClusterLocks(adapter, cluster, { prefix })
    const numsub = (channel: string) => numsubOnNodes(cluster.nodes, channel)
    everyPrimitive(() => ({ holder: c.locks, operator: c.other, prefix, numsub }))
  })
})

quorumPerAdapter('revocation in quorum mode (the holder hears the first node)', QUORUM_MAX_TTL, (open, quorum) => {
  let holder: Locks
  let operator: Locks
  const prefix = uniquePrefix('revoke-quorum')
  it('set up', async () => {
    holder = await open(prefix)
    operator = await open(prefix)
  })
  // Every node publishes; the holder listens on each.
  everyPrimitive(
    () => ({
      holder,
      operator,
      prefix,
      listeners: quorum.nodes.length,
      numsub: (channel) => numsubOnNodes(quorum.nodes, channel),
    }),
    QUORUM_MAX_TTL,
  )
  it('tear down', async () => {
    await closeQuietly([holder, operator])
  })
})
