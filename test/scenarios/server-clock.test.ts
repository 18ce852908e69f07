// The Redis server's wall clock steps back or jumps forward while locks are held (DESIGN.md 18 and
// 3): a real redis-server under libfaketime, whose clock the test moves. Fences follow
// max(last + 1, TIME) and the fence key outlives its last use by fenceRetention (by the server's
// clock), so a step back keeps fences increasing unless the fence key expires while the clock is
// still behind the last fence: the control shows that case, the bound of docs/evidence/safety.md section 9.
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { adapters, type TestClient } from '../../harness/clients.js'
import { clockTools, startClockedRedis, type ClockedRedis } from '../../harness/faketime.js'
import { mature } from '../../harness/redis-server.js'
import { closeQuietly, keysOf, uniquePrefix, until } from '../../harness/util.js'
import { createLocks, fencedSet, LockLostError, type Locks } from '../../src/index.js'

const tools = clockTools()
const MINUTE = 60_000

const fencesOf = async (locks: Locks, resource: string, n: number) => {
  const fences: number[] = []
  for (let i = 0; i < n; i++) {
    const lease = await locks.acquire(resource, { ttl: 1_000 })
    fences.push(lease.fence)
    await lease.release()
  }
  return fences
}

describe.skipIf('missing' in tools).each(adapters)('server clock steps (libfaketime, $name)', (adapter) => {
  let node: ClockedRedis
  let client: TestClient
  let open: Locks[] = []
  beforeAll(async () => {
    if ('missing' in tools) return
    node = await startClockedRedis(tools)
    client = await adapter.connect(node.redis.url)
  })
  afterAll(async () => {
    await client?.disconnect()
    await node?.stop()
  })
  afterEach(async () => {
    await closeQuietly(open)
    open = []
    node.clock.reset()
  })
  const locksFor = (name: string, options: { fenceRetention?: number } = {}) => {
    const prefix = uniquePrefix(name)
    const made = [createLocks({ redis: client.raw, prefix, ...options }), createLocks({ redis: client.raw, prefix, ...options })] as const
    open.push(...made)
    return { prefix, locks: made[0], rival: made[1] }
  }
  /** Until the server, by its own clock, has expired `resource`'s fence key (its retention ran out). */
  const untilFenceKeyExpired = (prefix: string, resource: string) =>
    until("the fence key expired by the server's clock", async () => Number(await client.command('PTTL', keysOf(prefix, resource).fence)) === -2, {
      timeout: 10_000,
      every: 50,
    })
  /** The server's TIME in ms. */
  const serverMs = async () => {
    const [s, us] = (await client.command('TIME')) as [string, string]
    return Number(s) * 1000 + Math.floor(Number(us) / 1000)
  }
  it('18. the server clock steps back by minutes: fences still strictly increase (last + 1), and a held lock is not granted again', async () => {
    const { prefix, locks, rival } = locksFor('clock-back')
    const before = await fencesOf(locks, 'r', 3)
    const held = await locks.acquire('held', { ttl: 10_000 })
    const serverBefore = await serverMs()
    node.clock.step(-5 * MINUTE)
    // The server's own clock went back (read from TIME on both sides of the step, not from ours).
    expect(serverBefore - (await serverMs())).toBeGreaterThan(5 * MINUTE - 1_000)
    expect(await rival.tryAcquire('held')).toBeNull()
    // Redis stores an absolute expiry, so on the stepped-back clock the key has 5 minutes more to live.
    expect(Number(await client.command('PTTL', keysOf(prefix, 'held').lock))).toBeGreaterThan(5 * MINUTE)
    const after = await fencesOf(locks, 'r', 3)
    const last = before[before.length - 1]!
    console.log(`[server clock] fences before the 5 min step back ${before.join(', ')}; after ${after.join(', ')}`)
    expect(after).toEqual([last + 1, last + 2, last + 3])
    node.clock.step(-10 * MINUTE)
    expect(await fencesOf(locks, 'r', 1)).toEqual([last + 4])
    expect(await held.release()).toBe(true)
    expect(await rival.tryAcquire('held')).not.toBeNull()
  })

  it('18. 3. the server clock jumps forward past the ttl: the key expires early, the next holder gets a larger fence, the guard refuses the old holder, whose extend is refused', async () => {
    const { locks, rival } = locksFor('clock-forward')
    const old = await locks.acquire('jump', { ttl: 10_000 })
    expect(await fencedSet(client.raw, 'clock-forward:row', 'old', old.fence)).toBe(true)
    node.clock.step(MINUTE)
    const next = await rival.acquire('jump', { ttl: 10_000, wait: 1_000 })
    console.log(`[server clock] fence before the 1 min jump forward ${old.fence}, after ${next.fence}`)
    // The fence follows TIME: a minute (in microseconds) larger.
    expect(next.fence - old.fence).toBeGreaterThan(59 * 1_000_000)
    expect(old.held).toBe(true) // its local, monotonic deadline has not passed: only Redis can tell it
    expect(await fencedSet(client.raw, 'clock-forward:row', 'next', next.fence)).toBe(true)
    expect(await fencedSet(client.raw, 'clock-forward:row', 'stale', old.fence)).toBe(false)
    expect(await client.command('GET', 'clock-forward:row')).toBe('next')
    await expect(old.extend()).rejects.toMatchObject({ name: 'LockLostError', reason: 'refused' })
    expect(old.signal.reason).toBeInstanceOf(LockLostError)
    expect(await old.release()).toBe(false)
    expect(await next.release()).toBe(true)
  })

  it('18. a step back by less than fenceRetention: the fence key expires once the clock is past the last fence, so the next fence is still larger', async () => {
    const { prefix, locks } = locksFor('clock-within', { fenceRetention: 2_000 })
    const [first] = await fencesOf(locks, 'r', 1)
    node.clock.step(-1_500)
    const [second] = await fencesOf(locks, 'r', 1)
    expect(second).toBe(first! + 1)
    await untilFenceKeyExpired(prefix, 'r') // 2 s after `second` was stored, by the server clock
    const [third] = await fencesOf(locks, 'r', 1)
    console.log(`[server clock] retention 2 s, step back 1.5 s: fences ${first}, ${second}, then after expiry ${third}`)
    expect(third).toBeGreaterThan(second!)
  })

  it('18. control: a step back by more than fenceRetention, then the fence key expires: the next fence is smaller than earlier ones', async () => {
    const { prefix, locks } = locksFor('clock-past', { fenceRetention: 2_000 })
    const [first] = await fencesOf(locks, 'r', 1)
    node.clock.step(-MINUTE)
    const [second] = await fencesOf(locks, 'r', 1)
    expect(second).toBe(first! + 1)
    await untilFenceKeyExpired(prefix, 'r')
    const [third] = await fencesOf(locks, 'r', 1)
    console.log(`[server clock] retention 2 s, step back 60 s: fences ${first}, ${second}, then after expiry ${third} (${(third! - first!) / 1e6} s)`)
    expect(third).toBeLessThan(first!)
  })

  it("18. a single node restarts empty while its clock is behind the last fence: the fence falls back to TIME, below the earlier ones (what the quorum's A4 and the guarded verify run avoid)", async () => {
    const { locks } = locksFor('clock-restart')
    const [first] = await fencesOf(locks, 'r', 1)
    node.clock.step(-MINUTE)
    await node.redis.restart()
    let pong = false
    void client.command('PING').then(
      (reply) => (pong = reply === 'PONG'),
      () => {},
    )
    await until('the client answers PING after the restart', () => pong, { timeout: 6_000 })
    const [afterRestart] = await fencesOf(locks, 'r', 1)
    console.log(`[server clock] step back 60 s, restart empty: fences ${first}, then ${afterRestart}`)
    expect(afterRestart).toBeLessThan(first!)
  })
})

describe.skipIf('missing' in tools)('server clock steps on a quorum (libfaketime)', () => {
  const MAX_TTL = 1_000
  let nodes: ClockedRedis[] = []
  let clients: Redis[] = []
  let locks: Locks | undefined
  beforeAll(async () => {
    if ('missing' in tools) return
    nodes = await Promise.all([0, 1, 2].map(() => startClockedRedis(tools)))
    clients = nodes.map((n) => new Redis({ host: n.redis.host, port: n.redis.port }))
    await mature(
      nodes.map((n) => n.redis),
      MAX_TTL,
    )
  })
  afterAll(async () => {
    await closeQuietly([locks])
    for (const c of clients) c.disconnect()
    await Promise.all(nodes.map((n) => n.stop()))
  })

  it('18. a node whose clock steps back past its own start (uptime below zero) does not fail the scripts: it sits out as a node that just started, and fences still increase', async () => {
    const prefix = uniquePrefix('clock-quorum')
    locks = createLocks({ redis: clients, prefix, maxTtl: MAX_TTL })
    const before = await fencesOf(locks, 'q', 2)
    nodes[0]!.clock.step(-5 * MINUTE)
    expect(await nodes[0]!.redis.cli('INFO', 'server')).toMatch(/uptime_in_seconds:-\d+/)
    const after = await fencesOf(locks, 'q', 3)
    console.log(`[server clock] quorum, node 0 stepped back 5 min: fences ${before.join(', ')}, then ${after.join(', ')}`)
    expect([...before, ...after]).toEqual([...before, ...after].sort((a, b) => a - b))
    expect(new Set([...before, ...after]).size).toBe(5)
    // Two of three nodes stepped back past their start: they sit out, so no majority (a refusal, not a script error).
    nodes[1]!.clock.step(-5 * MINUTE)
    const refused = await locks.acquire('q', { ttl: 1_000, wait: 300 }).then(
      (lease) => lease,
      (err: unknown) => err,
    )
    expect(refused).toMatchObject({ name: 'QuorumError', votes: [{ node: 0, outcome: 'restarting' }, { node: 1, outcome: 'restarting' }, { node: 2 }] })
  })
})
