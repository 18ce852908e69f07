// Quorum mode over independent masters, with real redis-server processes: basic contract,
// fairness and wake-ups across nodes, and fences that grow across majorities sharing few nodes.
import { readFile } from 'node:fs/promises'
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, InvalidArgumentError, QuorumError, type Lease, type Locks, type RedisClient } from '../../../src/index.js'
import { watchKey } from '../../../harness/keyspace.js'
import { mature, requireRedisOrSkip, startRedis, type RedisProcess } from '../../../harness/redis-server.js'
import { scripts, type LuaScript } from '../../../src/lua/index.js'
import { recordAcquires } from '../../../harness/telemetry.js'
import { sleep, until } from '../../../harness/until.js'
import { tokenIn } from '../../../harness/util.js'

// A restarted (or new) node counts once its uptime reaches maxTtl: keep it short in tests.
const MAX_TTL = 1_000

/**
 * Whether bytes reached one of `server`'s connections that it has not read yet (it is paused): the
 * kernel's receive queue of an established socket on its port, from /proc/net/tcp (no process to
 * start: the check must be quick, the node timeout runs meanwhile).
 */
async function hasUnread(server: RedisProcess): Promise<boolean> {
  const port = server.port.toString(16).toUpperCase().padStart(4, '0')
  return (await readFile('/proc/net/tcp', 'utf8')).split('\n').some((line) => {
    const [, local, , state, queues] = line.trim().split(/\s+/)
    return local?.endsWith(`:${port}`) && state === '01' && Number.parseInt(queues?.split(':')[1] ?? '0', 16) > 0
  })
}

/** Acquire attempts (mutex-acquire, mutex-acquire-many) a server ran since its SLOWLOG RESET, read on `client` (which logs every command). */
async function attemptsOn(client: Redis): Promise<number> {
  const log = (await client.call('SLOWLOG', 'GET', '-1')) as [number, number, number, string[]][]
  const isAttempt = (script: LuaScript, args: string[]) =>
    (args[0]?.toUpperCase() === 'EVALSHA' && args[1] === script.sha) || (args[0]?.toUpperCase() === 'EVAL' && args[1]?.startsWith(script.source.slice(0, 60)))
  return log.filter(([, , , args]) => isAttempt(scripts.mutexAcquire, args) || isAttempt(scripts.mutexAcquireMany, args)).length
}

interface Closable {
  close(): Promise<void>
}

/** One client per node, alternating ioredis and node-redis: quorum mode must take both at once. */
async function clientsFor(servers: RedisProcess[], offset = 0): Promise<{ raw: RedisClient[]; close(): Promise<void> }> {
  const raw: RedisClient[] = []
  const closers: (() => Promise<void>)[] = []
  for (const [i, server] of servers.entries()) {
    if ((i + offset) % 2 === 0) {
      const client = new Redis(server.url, { maxRetriesPerRequest: 2 })
      client.on('error', () => {})
      raw.push(client)
      closers.push(async () => client.disconnect())
    } else {
      const client = createClient({ url: server.url })
      client.on('error', () => {})
      await client.connect()
      raw.push(client)
      closers.push(async () => void (await client.destroy()))
    }
  }
  return { raw, close: async () => void (await Promise.allSettled(closers.map((c) => c()))) }
}

describe.skipIf(!requireRedisOrSkip())('quorum over 3 masters', () => {
  let servers: RedisProcess[] = []
  const cleanup: Closable[] = []
  let locks: Locks
  let other: Locks
  /** `locks`'s connections, one per node. */
  let locksClients: RedisClient[] = []

  beforeAll(async () => {
    servers = await Promise.all([0, 1, 2].map(() => startRedis()))
    const a = await clientsFor(servers)
    const b = await clientsFor(servers, 1)
    locksClients = a.raw
    cleanup.push(a, b)
    locks = createLocks({ redis: a.raw, maxTtl: MAX_TTL, ttl: MAX_TTL, quorum: { nodeTimeout: 250 } })
    other = createLocks({ redis: b.raw, maxTtl: MAX_TTL, ttl: MAX_TTL, quorum: { nodeTimeout: 250 } })
    await mature(servers, MAX_TTL)
  })

  afterAll(async () => {
    await locks?.close()
    await other?.close()
    for (const c of cleanup) await c.close()
    await Promise.all(servers.map((s) => s.stop()))
  })

  it('releases and extends by token on a majority, from another instance', async () => {
    // Connections of their own, open before the lease: a redis-cli process per read can take longer
    // than the 150 ms the check below leaves on a loaded machine.
    const direct = servers.map((s) => new Redis(s.url))
    await Promise.all(direct.map((c) => c.ping()))
    const lease = await locks.acquire('q-by-token', { ttl: 800 })
    expect(await other.extend('q-by-token', 'nope', 1_000)).toBe(false)
    expect(await other.extend('q-by-token', lease.token, 1_000)).toBe(true)
    const stored = await Promise.all(direct.map((c) => c.pttl('fencelock:{q-by-token}:L')))
    for (const c of direct) c.disconnect()
    expect(stored.filter((pttl) => pttl > 850).length).toBeGreaterThanOrEqual(2)
    expect(await other.release('q-by-token', lease.token)).toBe(true)
    expect((await locks.inspect('q-by-token')).held).toBe(false)
    expect(await other.release('q-by-token', lease.token)).toBe(false)
    const next = await other.acquire('q-by-token', { wait: 0 })
    expect(next.fence).toBeGreaterThan(lease.fence)
    await next.release()
  })

  it('rejects a ttl above maxTtl, a duplicate client and replicas in quorum mode', async () => {
    expect(() => createLocks({ redis: [], maxTtl: MAX_TTL })).toThrow(InvalidArgumentError)
    await expect(locks.acquire('q:ttl', { ttl: MAX_TTL + 1 })).rejects.toThrow(/no larger than 1000/)
    const c = new Redis(servers[0]!.url, { lazyConnect: true })
    expect(() => createLocks({ redis: [c, c, c] })).toThrow(/distinct clients/)
    expect(() => createLocks({ redis: [c], ttl: 40_000 })).toThrow(InvalidArgumentError) // default maxTtl 30 s
    expect(() => createLocks({ redis: [c], replicas: { count: 1, timeout: 10 } })).toThrow(/replicas/)
    c.disconnect()
  })

  it('takes the lock on every node, with one fence, and releases it everywhere', async () => {
    const watched = await watchKey(servers, 'fencelock:{q:basic}:L')
    const before = performance.now()
    const lease = await locks.acquire('q:basic')
    const after = performance.now()
    const tokens = await Promise.all(servers.map((s) => s.cli('GET', 'fencelock:{q:basic}:L')))
    // A majority granted it (the last node's grant may land a moment later: it is not waited for).
    expect(tokens.filter((t) => tokenIn(t) === lease.token).length).toBeGreaterThanOrEqual(2)
    // The fence was written back: a majority of the nodes now store at least the lease's fence.
    const fences = await Promise.all(servers.map(async (s) => Number(await s.cli('GET', 'fencelock:{q:basic}:F'))))
    expect(fences.filter((f) => f >= lease.fence).length).toBeGreaterThanOrEqual(2)
    // Its validity is the ttl (less a small drift margin) counted from when the request was sent,
    // which was between the two readings of the clock around the acquire.
    expect(lease.deadline).toBeGreaterThan(before + MAX_TTL - 300)
    expect(lease.deadline).toBeLessThanOrEqual(after + MAX_TTL)
    const info = await other.inspect('q:basic')
    expect(info).toMatchObject({ held: true, token: lease.token })
    expect(await other.tryAcquire('q:basic')).toBeNull()
    expect(await lease.release()).toBe(true)
    // Release resolves once a majority released; the last node follows at once: every node deleted
    // the lock, none kept it until its ttl ran out.
    await until('every node deleted the lock', () => watched.events.every((e) => e.includes('del')))
    await watched.stop()
    expect(watched.events.flat()).not.toContain('expired')
    const next = await other.acquire('q:basic')
    expect(next.fence).toBeGreaterThan(lease.fence)
    await next.release()
  })

  it('a stall of this process past the node timeout (a GC pause, a long synchronous task): the replies that came meanwhile count, not as timeouts', async () => {
    // Node runs due timers before it reads the sockets: without a turn of the loop between them,
    // every node's reply limit fires first and answered requests read as "No reply within 250 ms".
    // The nodes are stopped while the calls go out, and go on at the start of the stall: they
    // answer during it, long before the 250 ms are up for the stalled process to see.
    const stalled = async <T>(call: () => Promise<T>): Promise<T> => {
      for (const s of servers) s.pause()
      const work = call()
      work.catch(() => {})
      await until('the calls reached every node', async () => (await Promise.all(servers.map(hasUnread))).every(Boolean))
      for (const s of servers) s.resume()
      // From the check phase: the next turn of the loop starts with the timers.
      setImmediate(() => {
        const until = performance.now() + 600
        while (performance.now() < until) void 0
      })
      return work
    }
    // Each on a lease of its own: two stalls of 600 ms would outlast the 1 s lease itself.
    // tryAcquire: one attempt (acquire would try again after the timeouts, and hide them).
    const acquired = await stalled(() => locks.tryAcquire('q:stall'))
    expect(acquired?.remaining).toBeGreaterThan(0)
    expect(await other.tryAcquire('q:stall')).toBeNull()
    await acquired!.release()
    const extended = await locks.acquire('q:stall')
    await stalled(() => extended.extend(MAX_TTL))
    expect(extended.held).toBe(true)
    await extended.release()
    const released = await locks.acquire('q:stall')
    expect(await stalled(() => released.release())).toBe(true)
    expect(await other.tryAcquire('q:stall')).not.toBeNull()
  })

  it('wakes a waiter through pub/sub as soon as the holder releases', async () => {
    const acquires = recordAcquires()
    // Read on connections of their own: a redis-cli process per read could outlast the 1 s lease.
    const direct = servers.map((s) => new Redis(s.url))
    try {
      const holder = await locks.acquire('q:wake')
      // Every call of the holder's acquire was sent before it resolved, each node runs a
      // connection's commands in order: once a PING on each answers, they all ran.
      await Promise.all(locksClients.map((c) => (c as unknown as { ping(): Promise<unknown> }).ping()))
      await Promise.all(direct.map((c) => c.call('CONFIG', 'SET', 'slowlog-log-slower-than', '0', 'slowlog-max-len', '10000')))
      await Promise.all(direct.map((c) => c.call('SLOWLOG', 'RESET')))
      const waiting = other.acquire('q:wake', { wait: 3_000 })
      // A fresh waiter sends its first attempt, subscribes, and looks once more when the
      // subscription is active (a release in between would have gone unheard): both attempts must
      // have reached every node before the release, or the second one could take the lock instead.
      await until('the waiter made its two attempts on every node', async () => (await Promise.all(direct.map(attemptsOn))).every((n) => n >= 2))
      expect(holder.held).toBe(true)
      await holder.release()
      const lease = await waiting
      // The holder had ~850 ms left: the waiter went out again because the release's message named
      // it, not because its re-check timer ran out.
      const wakes = acquires.wakes('q:wake')
      expect(wakes).toContain('release')
      expect(wakes).not.toContain('recheck')
      expect(lease.fence).toBeGreaterThan(holder.fence)
      await lease.release()
    } finally {
      acquires.stop()
      await Promise.all(direct.map((c) => c.call('CONFIG', 'SET', 'slowlog-log-slower-than', '10000')))
      for (const c of direct) c.disconnect()
    }
  })

  it('a fence is larger than every earlier one even when majorities share a single node', async () => {
    // Force disjoint-but-one majorities: node 2 is blocked for the first lease, node 0 for the
    // second. Node 0 stores a high fence that node 2 never saw; only the write-back to node 1
    // (the shared node) carries it to the second majority.
    const key = 'fencelock:{q:shared}:L'
    // The foreign holders are deleted by the test, not left to expire: a loaded machine may take
    // longer than any short ttl between these lines, and a majority without node 0 then gets in.
    await servers[2]!.cli('SET', key, 'someone-else', 'PX', '60000')
    await servers[0]!.cli('SET', 'fencelock:{q:shared}:F', String(9e15)) // far above server TIME
    const first = await locks.acquire('q:shared')
    expect(first.fence).toBe(9e15 + 1)
    await first.release()
    await servers[2]!.cli('DEL', key) // node 2's foreign holder is gone
    await servers[0]!.cli('SET', key, 'someone-else', 'PX', '60000')
    const second = (await other.tryAcquire('q:shared'))!
    expect(second).not.toBeNull()
    expect(second.fence).toBeGreaterThan(first.fence)
    await second.release()
    await Promise.all(servers.map((s) => s.cli('DEL', 'fencelock:{q:shared}:F', key)))
  })

  it('gives the lock to one holder at a time, with strictly increasing fences, under contention', async () => {
    // Overlap = a lease granted while another one still believes it holds the lock.
    let current: Lease | undefined
    let overlaps = 0
    const fences: number[] = []
    const worker = async (set: Locks) => {
      for (let i = 0; i < 25; i++) {
        const lease: Lease = await set.acquire('q:contended', { wait: 10_000 })
        if (current?.held) overlaps++
        current = lease
        fences.push(lease.fence)
        await sleep(Math.random() * 3)
        if (current === lease) current = undefined
        await lease.release()
      }
    }
    await Promise.all([worker(locks), worker(other), worker(locks), worker(other)])
    expect(overlaps).toBe(0)
    expect(fences).toHaveLength(100)
    for (let i = 1; i < fences.length; i++) expect(fences[i]!).toBeGreaterThan(fences[i - 1]!)
  })

  it('hands the lock to waiters of different clients in the order they started waiting', async () => {
    const third = await clientsFor(servers)
    cleanup.push(third)
    const extra = createLocks({ redis: third.raw, maxTtl: MAX_TTL, ttl: MAX_TTL, quorum: { nodeTimeout: 250 } })
    cleanup.push(extra)
    const holder = await locks.acquire('q:fair')
    const order: string[] = []
    const wait = (set: Locks, name: string) =>
      set.acquire('q:fair', { wait: 5_000 }).then(async (lease) => {
        order.push(name)
        await lease.release()
      })
    // Each waiter starts once the one before it stands in line.
    const inLine = (n: number) => until(`${n} waiters stand in line`, async () => (await locks.inspect('q:fair')).waiters === n)
    const first = wait(other, 'first')
    await inLine(1)
    const second = wait(extra, 'second')
    await inLine(2)
    const third_ = wait(locks, 'third')
    await inLine(3)
    await holder.release()
    await Promise.all([first, second, third_])
    expect(order).toEqual(['first', 'second', 'third'])
  })

  it('does not grant a lock that only a minority could give, and undoes the partial one', async () => {
    const key = 'fencelock:{q:minority}:L'
    await servers[1]!.cli('SET', key, 'a', 'PX', '5000')
    await servers[2]!.cli('SET', key, 'b', 'PX', '5000')
    const watched = await watchKey(servers.slice(0, 1), key)
    expect(await locks.tryAcquire('q:minority')).toBeNull()
    // Node 0 granted it, and was given back at once: deleted, not left to expire.
    await until('node 0 deleted its grant', () => watched.events[0]!.includes('del'))
    await watched.stop()
    expect(watched.events[0]).toEqual(['del'])
    expect(await servers[0]!.cli('EXISTS', key)).toBe('0')
    await Promise.all(servers.map((s) => s.cli('DEL', key)))
  })

  it('a waiter whose partial grant is undone stands in line on every node again, where its grant took no place too', async () => {
    const key = 'fencelock:{q:undo-place}:L'
    const queue = 'fencelock:{q:undo-place}:Q'
    await servers[1]!.cli('SET', key, 'a', 'PX', '5000')
    await servers[2]!.cli('SET', key, 'b', 'PX', '5000')
    // Node 0 is free with nobody in line: it grants without a place; the other two refuse and queue it.
    const waiting = locks.acquire('q:undo-place', { wait: 400 }).then(
      () => 'acquired',
      (err: unknown) => (err as Error).name,
    )
    // Until node 0's grant is undone and the waiter's place put back there (read on connections of
    // their own: the waiter stands in line for 400 ms only).
    const direct = servers.map((s) => new Redis(s.url))
    const lines = await until('the grant on node 0 is undone and the waiter stands in line on every node', async () => {
      const [exists, ...inLine] = await Promise.all([direct[0]!.exists(key), ...direct.map((c) => c.zrange(queue, 0, -1))])
      return exists === 0 && inLine.every((line) => line.length > 0) && inLine
    })
    for (const c of direct) c.disconnect()
    expect(lines).toEqual([lines[0], lines[0], lines[0]])
    expect(await waiting).toBe('LockTimeoutError')
    await Promise.all(servers.map((s) => s.cli('DEL', key)))
  })

  it('fails with QuorumError listing every node when a majority is down, within the wait budget', async () => {
    servers[1]!.pause()
    servers[2]!.pause()
    try {
      const started = performance.now()
      const err = await locks.acquire('q:down', { wait: 1_200 }).catch((e: unknown) => e)
      const took = performance.now() - started
      expect(err).toBeInstanceOf(QuorumError)
      const q = err as QuorumError
      expect(q.code).toBe('QUORUM_FAILED')
      expect(q.needed).toBe(2)
      expect(q.votes.map((v) => v.outcome)).toEqual(['acquired', 'timeout', 'timeout'])
      // Promise 12: a typed error within the wait deadline (1.2 s), no hang; 10x margin.
      expect(took).toBeLessThan(12_000)
      expect(await tryQuorum(locks)).toBeInstanceOf(QuorumError) // tryAcquire: the same typed error
    } finally {
      servers[1]!.resume()
      servers[2]!.resume()
    }
    // Once the nodes answer again, the lock is free: every partial grant was undone.
    const lease = await locks.acquire('q:down', { wait: 2_000 })
    await lease.release()
  })
})

const tryQuorum = (locks: Locks) =>
  locks.tryAcquire('q:down').then(
    () => undefined,
    (e: unknown) => e,
  )

describe.skipIf(!requireRedisOrSkip())('quorum over 4 masters', () => {
  // With an even number of nodes, half is not a majority: two holders of two nodes each could
  // coexist. floor(4/2) + 1 = 3 nodes must grant (ceil(4/2) = 2 would be wrong).
  let servers: RedisProcess[] = []
  let clients: { close(): Promise<void> } | undefined
  let locks: Locks

  beforeAll(async () => {
    servers = await Promise.all([0, 1, 2, 3].map(() => startRedis()))
    const a = await clientsFor(servers)
    clients = a
    locks = createLocks({ redis: a.raw, maxTtl: MAX_TTL, ttl: MAX_TTL, quorum: { nodeTimeout: 250 } })
    await mature(servers, MAX_TTL)
  })

  afterAll(async () => {
    await locks?.close()
    await clients?.close()
    await Promise.all(servers.map((s) => s.stop()))
  })

  it('does not grant a lock that only half of the nodes could give', async () => {
    const key = 'fencelock:{q4:half}:L'
    // Another holder has nodes 2 and 3: only nodes 0 and 1 are free.
    await Promise.all([servers[2]!, servers[3]!].map((s) => s.cli('SET', key, 'someone-else', 'PX', '5000')))
    const watched = await watchKey(servers.slice(0, 2), key)
    expect(await locks.tryAcquire('q4:half')).toBeNull()
    // The two grants were undone: nodes 0 and 1 deleted them, not left them to expire.
    await until('nodes 0 and 1 deleted their grants', () => watched.events.every((e) => e.includes('del')))
    await watched.stop()
    expect(watched.events).toEqual([['del'], ['del']])
    expect(await servers[0]!.cli('EXISTS', key)).toBe('0')
    expect(await servers[1]!.cli('EXISTS', key)).toBe('0')
    // With three nodes free, three of four is a majority.
    await servers[3]!.cli('DEL', key)
    const lease = await locks.tryAcquire('q4:half')
    expect(lease).not.toBeNull()
    await lease!.release()
    await servers[2]!.cli('DEL', key)
  })
})
