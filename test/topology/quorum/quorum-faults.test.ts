// Quorum mode under faults, with real processes: a node killed with -9 mid-run, a majority
// killed, a node restarted empty under a held lease, and a client cut off from the majority.
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { afterEach, describe, expect, it } from 'vitest'
import { createLocks, LockLostError, QuorumError, RedisError, type Lease, type Locks, type RedisClient } from '../../../src/index.js'
import { startFaultProxy, type FaultProxy } from '../../../harness/fault-proxy.js'
import { watchKey } from '../../../harness/keyspace.js'
import { mature, requireRedisOrSkip, startRedis, type RedisProcess } from '../../../harness/redis-server.js'
import { until } from '../../../harness/until.js'
import { tokenIn } from '../../../harness/util.js'

// A restarted (or new) node counts once its uptime reaches maxTtl: keep it short in tests.
const MAX_TTL = 1_000
const OPTIONS = { maxTtl: MAX_TTL, ttl: MAX_TTL, quorum: { nodeTimeout: 250 } }

const teardown: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const step of teardown.splice(0).reverse()) await step().catch(() => {})
})

async function servers(n: number): Promise<RedisProcess[]> {
  const list = await Promise.all(Array.from({ length: n }, () => startRedis()))
  teardown.push(async () => void (await Promise.all(list.map((s) => s.stop()))))
  return list
}

/** A fault proxy in front of each node, closed after the test. */
async function proxiesFor(nodes: RedisProcess[]): Promise<FaultProxy[]> {
  const proxies: FaultProxy[] = []
  for (const n of nodes) {
    const proxy = await startFaultProxy({ host: n.host, port: n.port })
    proxies.push(proxy)
    teardown.push(() => proxy.close())
  }
  return proxies
}

/** One client per url, alternating ioredis and node-redis. */
async function clients(urls: string[], offset = 0): Promise<RedisClient[]> {
  const raw: RedisClient[] = []
  for (const [i, url] of urls.entries()) {
    if ((i + offset) % 2 === 0) {
      const client = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: () => 50 })
      client.on('error', () => {})
      raw.push(client)
      teardown.push(async () => client.disconnect())
      // Connected before the test's first request: a node still being connected to when the first
      // request's node timeout runs out would count as a timeout, not as what it answers.
      await client.ping()
    } else {
      const client = createClient({ url, socket: { reconnectStrategy: () => 50 } })
      client.on('error', () => {})
      await client.connect()
      raw.push(client)
      teardown.push(async () => void (await client.destroy()))
    }
  }
  return raw
}

/**
 * Until `client` answers a PING again after its node restarted, by itself (node-redis before 5.11
 * sometimes never reconnected after a kill -9: redis-faults.test.ts, the crash test). A ping the
 * client fails is sent again.
 */
async function answersAgain(client: RedisClient, what: string): Promise<void> {
  const pinger = client as unknown as { ping(): Promise<string> }
  let pending: Promise<unknown> | undefined
  let pong = false
  await until(
    `${what} answers again`,
    () => {
      pending ??= pinger.ping().then(
        (reply) => {
          pong = reply === 'PONG'
          pending = undefined
        },
        () => void (pending = undefined),
      )
      return pong
    },
    { timeout: 5_000, every: 20 },
  )
}

async function locksOn(nodes: RedisProcess[], offset = 0, urls = nodes.map((n) => n.url), maxTtl = MAX_TTL): Promise<Locks> {
  const locks = createLocks({ redis: await clients(urls, offset), ...OPTIONS, maxTtl, ttl: maxTtl })
  teardown.push(() => locks.close())
  return locks
}

describe.skipIf(!requireRedisOrSkip())('quorum under faults', () => {
  it('keeps granting, one holder at a time, while one of 5 nodes is killed with -9', async () => {
    const nodes = await servers(5)
    const sets = [await locksOn(nodes), await locksOn(nodes, 1)]
    await mature(nodes, MAX_TTL)
    // Overlap = a lease granted while another one still believes it holds the lock (a lease whose
    // deadline passed, e.g. during a scheduling stall of this busy machine, no longer does).
    let current: Lease | undefined
    let overlaps = 0
    let done = 0
    const fences: number[] = []
    const worker = async (set: Locks) => {
      for (let i = 0; i < 40; i++) {
        const lease: Lease = await set.acquire('f:kill', { wait: 5_000 })
        if (current?.held) overlaps++
        current = lease
        fences.push(lease.fence)
        await new Promise((resolve) => setImmediate(resolve)) // others run while it holds the lock
        if (current === lease) current = undefined
        done++
        await lease.release()
      }
    }
    const run = Promise.all([worker(sets[0]!), worker(sets[1]!), worker(sets[0]!), worker(sets[1]!)])
    await until('30 leases done', () => done >= 30, { timeout: 20_000, every: 5 })
    await nodes[2]!.kill9()
    const afterKill = done
    await run
    expect(done).toBe(160)
    expect(afterKill).toBeLessThan(150) // the kill really happened mid-run
    expect(overlaps).toBe(0)
    for (let i = 1; i < fences.length; i++) expect(fences[i]!).toBeGreaterThan(fences[i - 1]!)
  })

  it('fails with QuorumError, not a hang, when a majority is killed', async () => {
    const nodes = await servers(5)
    const locks = await locksOn(nodes)
    await mature(nodes, MAX_TTL)
    const held = await locks.acquire('f:majority')
    await Promise.all([nodes[0]!.kill9(), nodes[1]!.kill9(), nodes[3]!.kill9()])
    await held.release().catch(() => {}) // two nodes still answer
    const started = performance.now()
    const err = await locks.acquire('f:majority', { wait: 800 }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(QuorumError)
    // Promise 12: a typed error within the wait deadline (800 ms), not a hang; 10x margin.
    expect(performance.now() - started).toBeLessThan(8_000)
    const votes = (err as QuorumError).votes
    expect(votes).toHaveLength(5)
    expect(votes.filter((v) => v.outcome === 'acquired')).toHaveLength(2)
    for (const v of votes.filter((v) => v.outcome !== 'acquired')) {
      expect(['timeout', 'error']).toContain(v.outcome)
      expect(v.cause).toBeInstanceOf(Error)
    }
    expect(String(err)).toMatch(/majority \(3 of 5 nodes\)/)
  })

  it('6. a node restarted empty under a held lease gives no second quorum until maxTtl has passed', async () => {
    // maxTtl 2 s here: A's lease must outlast the restart and the checks even on a busy machine.
    const maxTtl = 2_000
    const nodes = await servers(5)
    const a = await locksOn(nodes, 0, undefined, maxTtl)
    // B's clients connect now, but B runs no script before node 2's restart: it never sees node
    // 2's old run_id, so only the server-side uptime check can keep node 2 out.
    const bClients = await clients(
      nodes.map((n) => n.url),
      1,
    )
    const b = createLocks({ redis: bClients, ...OPTIONS, maxTtl, ttl: maxTtl })
    teardown.push(() => b.close())
    await mature(nodes, maxTtl)
    // A holds exactly nodes 0-2: nodes 3 and 4 are briefly taken by someone else.
    const key = 'fencelock:{f:restart}:L'
    await nodes[3]!.cli('SET', key, 'other', 'PX', '300')
    await nodes[4]!.cli('SET', key, 'other', 'PX', '300')
    const lease = (await a.tryAcquire('f:restart'))!
    expect(lease).not.toBeNull()
    await nodes[2]!.restart() // loses A's lock
    await Promise.all([nodes[3]!, nodes[4]!].map((n) => n.cli('DEL', key))) // nodes 3 and 4 are free again
    // B's client to node 2 must be connected again: a node it cannot reach would be left out as
    // a timeout, and the refusal below would prove nothing about the uptime check.
    await answersAgain(bClients[2]!, "B's client to node 2")
    // Nodes 2, 3, 4 all grant B the lock, but node 2 has been up for less than maxTtl, so only 2
    // of the needed 3 count.
    expect(await b.tryAcquire('f:restart')).toBeNull()
    const info = await b.inspect('f:restart')
    expect(info.held).toBe(false) // A's token is on 2 nodes now: not a majority, yet not free either
    expect(lease.held).toBe(true) // so the refusal above happened while A's lease was valid
    // A's lease ends (its signal says so); after that B gets the lock (nodes 0, 1 free again), with a larger fence.
    await new Promise((resolve) => (lease.signal.aborted ? resolve(undefined) : lease.signal.addEventListener('abort', resolve, { once: true })))
    expect((lease.signal.reason as LockLostError).reason).toBe('expired')
    const next = await b.acquire('f:restart', { wait: 2_000 })
    expect(next.fence).toBeGreaterThan(lease.fence)
    await next.release()
  })

  it('6. the holder that saw the node restart (its run_id changed) leaves it out too', async () => {
    const nodes = await servers(3)
    const aClients = await clients(nodes.map((n) => n.url))
    const a = createLocks({ redis: aClients, ...OPTIONS })
    teardown.push(() => a.close())
    await mature(nodes, MAX_TTL)
    await (await a.acquire('f:runid')).release()
    await nodes[0]!.restart()
    await nodes[1]!.restart()
    await mature(nodes, MAX_TTL) // the restarted nodes' uptime is past maxTtl again...
    // (and this client is connected to them again: one still reconnecting answers as a timeout or
    // an error, not with its run_id)
    await Promise.all([0, 1].map((i) => answersAgain(aClients[i]!, `A's client to node ${i}`)))
    // ...but this client saw their run_id change only now: it waits maxTtl on its own clock.
    const started = performance.now()
    // Free everywhere, kept out only by nodes that do not count yet: tryAcquire says so.
    const refused = await a.tryAcquire('f:runid').catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(QuorumError)
    // (A client still reconnecting to a restarted node reports it as timeout or error instead.)
    const votes = (refused as QuorumError).votes
    expect(
      votes.some((v) => v.outcome === 'restarting'),
      JSON.stringify(votes),
    ).toBe(true)
    expect(votes.filter((v) => v.outcome === 'held' || v.outcome === 'acquired').length, JSON.stringify(votes)).toBeLessThanOrEqual(1)
    const lease = await a.acquire('f:runid', { wait: 3_000 })
    // Promise 6: a node whose restart this client saw counts only after maxTtl on its own clock (a
    // lower bound: not granted early).
    expect(performance.now() - started).toBeGreaterThan(MAX_TTL - 100)
    await lease.release()
  })

  it('counts validity from before the first request: a majority that answers too late gives no lease, and nothing is left behind', async () => {
    const nodes = await servers(3)
    const proxies = await proxiesFor(nodes)
    // Node timeout close to the ttl, so the slow replies are waited for and only validity decides.
    const slow = createLocks({ redis: await clients(proxies.map((p) => p.url)), maxTtl: MAX_TTL, ttl: MAX_TTL, quorum: { nodeTimeout: 900 } })
    teardown.push(() => slow.close())
    const observer = await locksOn(nodes, 1)
    await mature(nodes, MAX_TTL)
    proxies[0]!.setDelay(600, { direction: 'up' })
    proxies[1]!.setDelay(600, { direction: 'up' })
    const watched = await watchKey(nodes.slice(0, 2), 'fencelock:{f:late}:L')
    // Nodes 0 and 1 grant at ~600 ms (their locks would last until ~1,600 ms), the write-back
    // lands at ~1,200 ms: past ttl - drift (988 ms), so no lease.
    const err = await slow.tryAcquire('f:late').catch((e: unknown) => e)
    // It stopped waiting when validity ran out (ttl - drift, counted from before the first request),
    // not when the slow replies came: the error names that limit.
    expect(err).toBeInstanceOf(RedisError)
    expect((err as RedisError).message).toMatch(/^No reply from Redis within 988 ms/)
    for (const p of proxies) p.heal()
    // The late grant was given back on nodes 0 and 1 as soon as it arrived: deleted there, not
    // left to expire by itself (~1,600 ms); then the lock is free.
    await until('nodes 0 and 1 deleted the late grant', () => watched.events.every((e) => e.includes('del')))
    await watched.stop()
    expect(watched.events).toEqual([['del'], ['del']])
    const lease = await observer.tryAcquire('f:late')
    expect(lease).not.toBeNull()
    await lease!.release()
  })

  it("aborts a holder's signal before its deadline when it is cut off from the majority", async () => {
    const nodes = await servers(3)
    const proxies = await proxiesFor(nodes)
    const locks = await locksOn(
      nodes,
      0,
      proxies.map((p) => p.url),
    )
    const observer = await locksOn(nodes, 1)
    await mature(nodes, MAX_TTL)
    const lease = await locks.acquire('f:partition', { autoExtend: true })
    // Every node has the lock (the last grant is not waited for) before the cut.
    await until('every node holds the lease', async () =>
      (await Promise.all(nodes.map((n) => n.cli('GET', 'fencelock:{f:partition}:L')))).every((value) => tokenIn(value) === lease.token),
    )
    proxies[0]!.partition()
    proxies[1]!.partition()
    const reason = await new Promise<unknown>((resolve) => {
      lease.signal.addEventListener('abort', () => resolve(lease.signal.reason), { once: true })
    })
    expect(reason).toBeInstanceOf(LockLostError)
    // The first renewal (at ttl/3) cannot reach a majority: the signal fires then, with the quorum's
    // verdict on that renewal as its cause, well before the deadline (where the cause would be the
    // silence of an extension still waiting for its reply).
    const lost = reason as LockLostError
    expect(lost.reason).toBe('unreachable')
    expect(lost.cause).toBeInstanceOf(QuorumError)
    const votes = (lost.cause as QuorumError).votes.map((v) => v.outcome)
    expect(
      votes.filter((v) => v === 'timeout' || v === 'error'),
      JSON.stringify(votes),
    ).toHaveLength(2)
    // And the rest of the majority cannot be in its hands: another client gets the lock once it expires there.
    const next = await observer.acquire('f:partition', { wait: 2_000 })
    expect(next.fence).toBeGreaterThan(lease.fence)
    await next.release()
  })
})
