// Every server version users run: Redis 6.2, 7.2, 7.4 and Valkey 7.2, 8.0 (built from their release
// sources by ../shared/servers/build.sh; the default suites run on the Redis on PATH), each with
// every primitive's scripts through both client adapters: fences, extension and release, a waiter
// woken by a release, a semaphore, a read/write lock, all-or-nothing, an election, the fenced
// guards and a group commit; the README's least-privilege ACL user; a quorum of three nodes of the
// version with two restarted empty (run_id and uptime). Redis 6.0 is refused at once with a typed error that names the
// version found and the one needed, in the library and in the CLI.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { claimFence, createLocks, fencedSet, QuorumError, ServerVersionError, type Locks } from '../../src/index.js'
import { leastPrivilegeUser } from '../../harness/acl.js'
import { adapters, type TestClient } from '../../harness/clients.js'
import { cli } from '../../harness/cli-process.js'
import { scriptCalls } from '../../harness/commandstats.js'
import { useClient } from '../../harness/per-adapter.js'
import { mature, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { SERVERS, serverBinary, type ServerName } from '../../harness/servers.js'
import { recordAcquires } from '../../harness/telemetry.js'
import { until } from '../../harness/util.js'

/** A redis-server of `name` for the describe it is called in, and the target its clients connect to. */
function useServer(server: string): { readonly redis: RedisProcess; readonly url: string } {
  let redis: RedisProcess | undefined
  beforeAll(async () => {
    redis = await startRedis({ server })
  })
  afterAll(async () => {
    await redis?.kill9()
  })
  return {
    get redis() {
      return redis!
    },
    get url() {
      return redis!.url
    },
  }
}

const old = serverBinary('redis-6.0.20')

describe.skipIf('missing' in old)('Redis 6.0.20: refused with ServerVersionError', () => {
  const target = useServer('server' in old ? old.server : '')

  describe.each(adapters)('$name', (adapter) => {
    const t = useClient(adapter, target, { prefix: 'old' })

    it('acquire, tryAcquire, a semaphore and an election fail at once, naming 6.0.20 and 6.2; the server refusal is the cause', async () => {
      const acquires = recordAcquires()
      const refusals = [
        await t.locks.acquire('old:a', { wait: 5_000 }).catch((e: unknown) => e),
        await t.locks.tryAcquire('old:b').catch((e: unknown) => e),
        await t.locks
          .semaphore('old:s', { limit: 2 })
          .acquire({ wait: 5_000 })
          .catch((e: unknown) => e),
        await t.locks
          .election('old:e')
          .campaign('me', { wait: 5_000 })
          .catch((e: unknown) => e),
      ]
      for (const err of refusals) {
        expect(err).toBeInstanceOf(ServerVersionError)
        expect(err).toMatchObject({ code: 'SERVER_UNSUPPORTED', version: '6.0.20', required: '6.2.0' })
        expect(String((err as Error).message)).toMatch(/Redis 6\.0\.20 is too old for fencelock: it needs Redis 6\.2 or newer/)
        expect(String(((err as Error).cause as Error).message)).toMatch(/script/i)
      }
      acquires.stop()
      // Refused at the first attempt, not retried until the waits (5 s each) ran out.
      expect(acquires.events.map((e) => [e.kind, e.outcome, e.attempts, e.wakes])).toEqual([
        ['mutex', 'error', 1, []],
        ['mutex', 'error', 1, []],
        ['semaphore', 'error', 1, []],
        ['election', 'error', 1, []],
      ])
    })
  })

  it('the CLI exits 69 and says which version it found and which it needs', async () => {
    const run = await cli(['--redis', target.url, 'run', 'old:cli', '--ttl', '5s', '--wait', '0', '--', 'true'])
    expect(run.code).toBe(69)
    expect(run.stderr).toMatch(/Redis 6\.0\.20 is too old for fencelock: it needs Redis 6\.2 or newer/)
  })
})

/** What every supported version must do, through the public API only. */
function behaviours(name: ServerName, locks: () => Locks, client: () => TestClient, redis: () => RedisProcess): void {
  it(`mutex on ${name}: fences increase, extend and release; a waiter is woken by the release`, async () => {
    const first = await locks().acquire('v:m', { ttl: 2_000 })
    const acquires = recordAcquires()
    const waiting = locks().acquire('v:m', { ttl: 2_000, wait: 5_000 })
    await first.extend(3_000)
    await first.release()
    const second = await waiting
    acquires.stop()
    // It waited, and went on because of the release (its message, or the look it took once its
    // channel was subscribed), not because the re-check after the holder's ttl ran out.
    expect(acquires.of('v:m').map((e) => [e.outcome, e.contended])).toEqual([['acquired', true]])
    expect(acquires.wakes('v:m')).not.toContain('recheck')
    expect(second.fence).toBeGreaterThan(first.fence)
    await second.release()
    expect(await locks().tryAcquire('v:m')).not.toBeNull()
  })

  it(`semaphore, read/write lock, all-or-nothing and election on ${name}`, async () => {
    const pool = locks().semaphore('v:s', { limit: 2 })
    const permits = [await pool.acquire(), await pool.acquire()]
    expect(await pool.tryAcquire()).toBeNull()
    await Promise.all(permits.map((p) => p.release()))
    const rw = locks().readWrite('v:rw')
    const readers = [await rw.read(), await rw.read()]
    expect(await rw.tryWrite()).toBeNull()
    await Promise.all(readers.map((r) => r.release()))
    const writer = await rw.write()
    expect(await rw.tryRead()).toBeNull()
    await writer.release()
    const both = await locks().acquireAll(['v:x', 'v:y'])
    expect(await locks().tryAcquire('v:y')).toBeNull()
    await both.release()
    const term = await locks().election('v:e').campaign('leader-1')
    expect(await locks().election('v:e').leader()).toMatchObject({ value: 'leader-1' })
    await term.resign()
  })

  it(`the fenced guards and a group commit on ${name}`, async () => {
    const lease = await locks().acquire('v:g')
    expect(await claimFence(client().raw, 'v:row', lease.fence)).toBe(true)
    expect(await fencedSet(client().raw, 'v:row', 'new', lease.fence)).toBe(true)
    expect(await fencedSet(client().raw, 'v:row', 'stale', lease.fence - 1)).toBe(false)
    await lease.release()
    // Ten acquisitions in one turn: two script calls (8 at once, 2 at the end of the turn); each resource's fence grows from batch to batch.
    // (Not necessarily distinct across resources: from 7.2 a script sees one TIME throughout.)
    const batch = () => Promise.all(Array.from({ length: 10 }, (_, i) => locks().tryAcquire(`v:batch:${i}`)))
    await redis().cli('CONFIG', 'RESETSTAT')
    const first = await batch()
    expect(await scriptCalls(redis())).toBe(2)
    expect(first.every((l) => l?.held)).toBe(true)
    await Promise.all(first.map((l) => l!.release()))
    const again = await batch()
    for (const [i, lease] of again.entries()) expect(lease!.fence).toBeGreaterThan(first[i]!.fence)
    await Promise.all(again.map((l) => l!.release()))
  })
}

for (const name of SERVERS.filter((s) => s !== 'redis-6.0.20')) {
  const built = serverBinary(name)
  describe.skipIf('missing' in built)(`on ${name}`, () => {
    const target = useServer('server' in built ? built.server : '')
    describe.each(adapters)('$name', (adapter) => {
      const t = useClient(adapter, target, { prefix: name })
      behaviours(
        name,
        () => t.locks,
        () => t.client,
        () => target.redis,
      )
    })
  })
}

/** What depends on the server beyond the scripts: its ACL rules, and quorum mode's restart detection (INFO run_id, uptime). */
function operations(name: ServerName, server: string, target: { readonly redis: RedisProcess; readonly url: string }): void {
  it(`the README's least-privilege ACL user on ${name}: a waiter woken by the release, a semaphore, the guards refused outside the rule`, async () => {
    await target.redis.cli(...leastPrivilegeUser('locker', 'fencelock-acl:'))
    const client = new Redis(target.url.replace('redis://', 'redis://locker:pw@'))
    client.on('error', () => {})
    const locks = createLocks({ redis: client, prefix: 'fencelock-acl:' })
    try {
      const first = await locks.acquire('a', { ttl: 2_000 })
      const waiting = locks.acquire('a', { ttl: 2_000, wait: 5_000 })
      await until('the waiter is in line', async () => (await locks.inspect('a')).waiters === 1)
      await first.release()
      const second = await waiting
      expect(second.fence).toBeGreaterThan(first.fence)
      await second.release()
      const permit = await locks.semaphore('s', { limit: 1 }).acquire()
      await permit.release()
      // A key outside the rule: the server refuses it (NOPERM), as the rule means it to.
      await expect(fencedSet(client, 'elsewhere', 'v', 1)).rejects.toThrow(/NOPERM/)
    } finally {
      await locks.close()
      client.disconnect()
    }
  })

  it(`a quorum of three ${name} nodes: two restarted empty do not count until maxTtl (run_id seen), and fences keep increasing`, async () => {
    const maxTtl = 1_000
    const nodes = await Promise.all([0, 1, 2].map(() => startRedis({ server })))
    const clients = nodes.map((n) => {
      const c = new Redis(n.url, { maxRetriesPerRequest: 1, retryStrategy: () => 50 })
      c.on('error', () => {})
      return c
    })
    // The run_id rule needs the client to have seen each node's run_id before the restart: a reply
    // later than the node timeout is ignored, run_id and all (under a loaded CI machine one came
    // later than 250 ms, and that node then counted on its uptime alone, as it safely may).
    const locks = createLocks({ redis: clients, maxTtl, ttl: maxTtl, quorum: { nodeTimeout: 900 } })
    try {
      await mature(nodes, maxTtl)
      const first = await locks.acquire('q', { wait: 3_000 })
      await first.release()
      await nodes[0]!.restart()
      await nodes[1]!.restart()
      await mature(nodes, maxTtl)
      const refused = await locks.tryAcquire('q').catch((e: unknown) => e)
      expect(refused).toBeInstanceOf(QuorumError)
      expect((refused as QuorumError).votes.filter((v) => v.outcome === 'held' || v.outcome === 'acquired').length).toBeLessThanOrEqual(1)
      const next = await locks.acquire('q', { wait: 3_000 })
      expect(next.fence).toBeGreaterThan(first.fence)
      await next.release()
    } finally {
      await locks.close()
      for (const c of clients) c.disconnect()
      await Promise.all(nodes.map((n) => n.kill9()))
    }
  })
}

for (const name of SERVERS.filter((s) => s !== 'redis-6.0.20')) {
  const built = serverBinary(name)
  describe.skipIf('missing' in built)(`ACL and quorum on ${name}`, () => {
    const server = 'server' in built ? built.server : ''
    const target = useServer(server)
    operations(name, server, target)
  })
}
