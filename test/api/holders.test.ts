// Who holds what, since when: every primitive's inspect shows each holder's label (createLocks'
// `holder`, default hostname:pid) and the Redis server's times of its grant and of its last
// extension, on one Redis, on one Redis with a replica (WAIT), on a Redis Cluster and on a quorum
// of three masters. Times are asserted by their order (against the server's TIME and each other),
// never by a duration.
import { hostname } from 'node:os'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type HolderInfo, type Locks, type LocksOptions } from '../../src/index.js'
import { everyCluster, useClusterClient } from '../../harness/cluster-clients.js'
import { useCluster, useMatureQuorum, useRedis, useReplicated } from '../../harness/per-adapter.js'
import { requireRedisOrSkip, type RedisProcess } from '../../harness/redis-server.js'
import { closeQuietly, uniquePrefix, until } from '../../harness/util.js'

type Options = Omit<LocksOptions, 'redis'>

/** The server's TIME in ms on each node (one on a single Redis): what `since` is read against. */
type ServerMs = () => Promise<number[]>

/** A topology to run the suite on: instances with the given options, and the nodes' clocks. */
interface Topology {
  open(options: Options): Locks
  serverMs: ServerMs
}

async function timeOf(client: Redis): Promise<number> {
  const [s, us] = (await client.call('TIME')) as [string, string]
  return Number(s) * 1_000 + Math.floor(Number(us) / 1_000)
}

/** A client per node for the nodes' TIME, for the enclosing describe. */
function useClocks(nodes: () => readonly RedisProcess[]): ServerMs {
  let clients: Redis[] = []
  beforeAll(() => {
    clients = nodes().map((n) => new Redis(n.url))
  })
  afterAll(() => clients.forEach((c) => c.disconnect()))
  return () => Promise.all(clients.map(timeOf))
}

/** Instances made by `open` (one prefix: they see each other's locks) are closed after the enclosing describe. */
function closing(make: (options: Options) => Locks): (options: Options) => Locks {
  const made: Locks[] = []
  const prefix = uniquePrefix('holders')
  afterAll(() => closeQuietly(made))
  return (options) => {
    const locks = make({ prefix, ...options })
    made.push(locks)
    return locks
  }
}

/** Recorded and within the server's clock readings taken before and after: granted in between. */
function expectRecorded(info: HolderInfo, holder: string, before: number[], after: number[]): void {
  expect(info.holder).toBe(holder)
  expect(info.since).not.toBeNull()
  expect(info.since!).toBeGreaterThanOrEqual(Math.min(...before))
  expect(info.since!).toBeLessThanOrEqual(Math.max(...after))
  expect(info.lastExtended!).toBeGreaterThanOrEqual(info.since!)
}

const NOTHING = { holder: null, since: null, lastExtended: null }

function holderSuite(topology: () => Topology): void {
  const open = (options: Options = {}) => topology().open({ ttl: 5_000, ...options })
  const serverMs = () => topology().serverMs()
  /** The server's ms clock must tick between a grant and its extension for the order to show: until every node's TIME moved on. */
  const tick = async () => {
    const last = Math.max(...(await serverMs()))
    await until("the servers' clocks ticked", async () => Math.min(...(await serverMs())) > last, { every: 1 })
  }

  it('a mutex shows its holder label, since and last extension; an extension moves lastExtended forward', async () => {
    const locks = open({ holder: 'x' })
    const before = await serverMs()
    const lease = await locks.acquire('m')
    const after = await serverMs()
    const info = await locks.inspect('m')
    expect(info).toMatchObject({ held: true, token: lease.token })
    expectRecorded(info, 'x', before, after)
    await tick()
    await lease.extend(5_000)
    const extended = await locks.inspect('m')
    expect(extended.since).toBe(info.since)
    expect(extended.lastExtended!).toBeGreaterThan(info.lastExtended!)
    expect(extended.holder).toBe('x')
    await lease.release()
    expect(await locks.inspect('m')).toMatchObject({ held: false, ...NOTHING })
  })

  it('acquisitions of one turn, sent in one script call, each record the label', async () => {
    const locks = open({ holder: 'batch' })
    const names = ['g1', 'g2', 'g3', 'g4']
    const leases = await Promise.all(names.map((n) => locks.acquire(n)))
    for (const [i, n] of names.entries()) expect(await locks.inspect(n)).toMatchObject({ token: leases[i]!.token, holder: 'batch' })
    await Promise.all(leases.map((l) => l.release()))
  })

  it('the default label is hostname:pid', async () => {
    const locks = open()
    const lease = await locks.acquire('default')
    expect((await locks.inspect('default')).holder).toBe(`${hostname()}:${process.pid}`)
    await lease.release()
  })

  it("another instance's inspect names the holder that is not itself", async () => {
    const a = open({ holder: 'service-a/pod-1' })
    const b = open({ holder: 'service-b' })
    const lease = await a.acquire('shared')
    expect((await b.inspect('shared')).holder).toBe('service-a/pod-1')
    await lease.release()
    const next = await b.acquire('shared')
    expect((await a.inspect('shared')).holder).toBe('service-b')
    await next.release()
  })

  it('each semaphore lease shows its label with its permits', async () => {
    const a = open({ holder: 'a' })
    const b = open({ holder: 'b' })
    const before = await serverMs()
    const one = await a.semaphore('pool', { limit: 4 }).acquire()
    const two = await b.semaphore('pool', { limit: 4 }).acquire({ permits: 2 })
    const after = await serverMs()
    const info = await a.semaphore('pool', { limit: 4 }).inspect()
    expect(info.held).toBe(3)
    const byToken = new Map(info.permits.map((p) => [p.token, p]))
    expectRecorded(byToken.get(one.token)!, 'a', before, after)
    expectRecorded(byToken.get(two.token)!, 'b', before, after)
    expect(byToken.get(two.token)!.permits).toBe(2)
    await tick()
    await two.extend(5_000)
    const extended = new Map((await a.semaphore('pool', { limit: 4 }).inspect()).permits.map((p) => [p.token, p]))
    expect(extended.get(two.token)!.lastExtended!).toBeGreaterThan(byToken.get(two.token)!.lastExtended!)
    expect(extended.get(one.token)!.lastExtended).toBe(byToken.get(one.token)!.lastExtended)
    await Promise.all([one.release(), two.release()])
    expect((await a.semaphore('pool', { limit: 4 }).inspect()).permits).toEqual([])
  })

  it('a read/write lock shows its writer, and each reader, with label and times', async () => {
    const w = open({ holder: 'writer' })
    const r1 = open({ holder: 'reader-1' })
    const r2 = open({ holder: 'reader 2' })
    const before = await serverMs()
    const write = await w.readWrite('cfg').write()
    const after = await serverMs()
    const held = await r1.readWrite('cfg').inspect()
    expectRecorded(held.writer!, 'writer', before, after)
    expect(held.writer!.token).toBe(write.token)
    await write.release()
    const readBefore = await serverMs()
    const [a, b] = await Promise.all([r1.readWrite('cfg').read(), r2.readWrite('cfg').read()])
    const readAfter = await serverMs()
    const reading = await w.readWrite('cfg').inspect()
    expect(reading.writer).toBeNull()
    const readers = new Map(reading.readers.map((r) => [r.token, r]))
    expectRecorded(readers.get(a!.token)!, 'reader-1', readBefore, readAfter)
    expectRecorded(readers.get(b!.token)!, 'reader 2', readBefore, readAfter)
    await tick()
    await b!.extend(5_000)
    const extended = new Map((await w.readWrite('cfg').inspect()).readers.map((r) => [r.token, r]))
    expect(extended.get(b!.token)!.lastExtended!).toBeGreaterThan(readers.get(b!.token)!.lastExtended!)
    expect(extended.get(b!.token)!.since).toBe(readers.get(b!.token)!.since)
    await Promise.all([a!.release(), b!.release()])
    expect((await w.readWrite('cfg').inspect()).readers).toEqual([])
  })

  it("an election's leader shows its label and times in inspect and leader()", async () => {
    const locks = open({ holder: 'candidate-a' })
    const election = locks.election('sched')
    const before = await serverMs()
    const term = await election.campaign('host-a')
    const after = await serverMs()
    const info = await open({ holder: 'observer' }).election('sched').inspect()
    expect(info.leader).toMatchObject({ value: 'host-a', fence: term.fence })
    expectRecorded(info.leader!, 'candidate-a', before, after)
    await tick()
    await term.extend(5_000)
    const leader = await election.leader()
    expect(leader!.holder).toBe('candidate-a')
    expect(leader!.lastExtended!).toBeGreaterThan(info.leader!.lastExtended!)
    await term.release()
    expect((await election.inspect()).leader).toBeNull()
  })

  it('an all-or-nothing lease shows its label on every resource', async () => {
    const locks = open({ holder: 'transfer' })
    const before = await serverMs()
    const lease = await locks.acquireAll(['acct:1', 'acct:2'])
    const after = await serverMs()
    for (const resource of ['acct:1', 'acct:2']) {
      const info = await locks.inspect(resource)
      // One token for all of them where they share a node (or a cluster slot); one lease each otherwise.
      expect(lease.token.split(' ')).toContain(info.token)
      expectRecorded(info, 'transfer', before, after)
    }
    const first = await locks.inspect('acct:1')
    await tick()
    await lease.extend(5_000)
    for (const resource of ['acct:1', 'acct:2']) expect((await locks.inspect(resource)).lastExtended!).toBeGreaterThan(first.lastExtended!)
    await lease.release()
    expect(await locks.inspect('acct:2')).toMatchObject({ held: false, ...NOTHING })
  })
}

describe.skipIf(!requireRedisOrSkip())('holders you can name', () => {
  describe('on one Redis', () => {
    const server = useRedis()
    const clock = useClocks(() => [server.redis])
    let client: Redis
    beforeAll(() => {
      client = new Redis(server.url)
    })
    afterAll(() => client.disconnect())
    const open = closing((options) => createLocks({ redis: client, ...options }))
    holderSuite(() => ({ open, serverMs: clock }))
  })

  describe('on one Redis with a replica (WAIT)', () => {
    const pair = useReplicated()
    const clock = useClocks(() => [pair.primary])
    let client: Redis
    beforeAll(() => {
      client = new Redis(pair.primary.url)
    })
    afterAll(() => client.disconnect())
    const open = closing((options) => createLocks({ redis: client, replicas: { count: 1, timeout: 1_000 }, ...options }))
    holderSuite(() => ({ open, serverMs: clock }))
  })

  describe('on a Redis Cluster', () => {
    const cluster = useCluster({ masters: 3 })
    const clock = useClocks(() => cluster.nodes)
    const c = useClusterClient(everyCluster[0]!, cluster)
    const open = closing((options) => createLocks({ redis: c.client.raw, ...options }))
    holderSuite(() => ({ open, serverMs: clock }))
  })

  describe('on a quorum of three masters', () => {
    const maxTtl = 5_000
    const quorum = useMatureQuorum(maxTtl)
    const clock = useClocks(() => quorum.nodes)
    let clients: Redis[] = []
    beforeAll(() => {
      clients = quorum.nodes.map((n) => new Redis(n.url))
    })
    afterAll(() => clients.forEach((c) => c.disconnect()))
    const open = closing((options) => createLocks({ redis: clients, maxTtl, quorum: { nodeTimeout: 500 }, ...options }))
    holderSuite(() => ({ open, serverMs: clock }))

    it('merges the nodes: the majority holder, its earliest grant, and when a majority had extended it', async () => {
      const prefix = uniquePrefix('merge')
      const locks = open({ prefix })
      const lock = `${prefix}{merged}:L`
      // Two nodes hold token t (granted at 1000 and 2000, extended at 5000 and 3000), the third another's.
      await clients[0]!.set(lock, 't 1000 5000 q', 'PX', 5_000)
      await clients[1]!.set(lock, 't 2000 3000 q', 'PX', 5_000)
      await clients[2]!.set(lock, 'u 4000 4000 other', 'PX', 5_000)
      expect(await locks.inspect('merged')).toMatchObject({ held: true, token: 't', holder: 'q', since: 1000, lastExtended: 3000 })
      // No token on a majority: nobody holds it, and nothing is shown of anyone.
      await clients[1]!.set(lock, 'v 2000 3000 third', 'PX', 5_000)
      expect(await locks.inspect('merged')).toMatchObject({ held: false, token: null, ...NOTHING })
    })
  })
})
