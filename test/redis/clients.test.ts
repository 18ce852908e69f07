// Every supported client major (installed side by side as aliased dev dependencies) runs the same
// core subset: acquire, wait and wake by release, increasing fences, release, tryAcquire,
// fencedSet/claimFence, close; on a real redis-server, a real 3-master Redis Cluster, and through a
// real Sentinel. A plain `npm install` brings the newest majors, so each of them must be tested,
// not only the one the rest of the suite uses. Values that are not a client are refused at once.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { Cluster as IORedisCluster5, Redis as IORedis5 } from 'ioredis'
import { Cluster as IORedisCluster6, Redis as IORedis6 } from 'ioredis6'
import { Cluster as ValkeyCluster, Redis as Valkey } from 'iovalkey'
import { createClient as createClient5, createClientPool as createClientPool5, createCluster as createCluster5, createSentinel as createSentinel5 } from 'redis'
import { createClient as createClient4, createCluster as createCluster4 } from 'redis4'
import { createClient as createClient6, createCluster as createCluster6, createSentinel as createSentinel6 } from 'redis6'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { claimFence, ClosedError, createLocks, fencedSet, InvalidArgumentError, type IORedisClient, type Locks, type RedisClient } from '../../src/index.js'
import { freePort, requireRedisOrSkip, startRedis, type RedisCluster, type RedisProcess } from '../../harness/redis-server.js'
import { describeRedis, useCluster } from '../../harness/per-adapter.js'
import { recordAcquires } from '../../harness/telemetry.js'
import { until } from '../../harness/util.js'

interface Connection {
  /** The library's own client object, as a user passes it. */
  client: RedisClient
  get(key: string): Promise<unknown>
  close(): Promise<void>
}

interface Major {
  /** What the README and peerDependencies call it. */
  name: string
  /** The installed package (an alias for the older or newer majors) and the major it must be. */
  pkg: string
  major: number
  connect(url: string): Promise<Connection>
}

/** What the tests use of an ioredis-family client (ioredis 5 and 6, iovalkey; single node or cluster). */
type IORedisFamily = IORedisClient & {
  once(event: string, listener: () => void): unknown
  get(key: string): Promise<string | null>
}

const ioredisLike =
  <T>(create: (target: T) => IORedisFamily) =>
  async (target: T): Promise<Connection> => {
    const client = create(target)
    client.on('error', () => {})
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve())
      client.once('end', () => reject(new Error('the client ended before it was ready')))
    })
    return { client, get: (key: string) => client.get(key), close: async () => void client.disconnect() }
  }

/**
 * What the tests use of a node-redis-family client (createClient, createCluster, createSentinel;
 * node-redis 4, 5, 6): 5 and 6 end it with destroy(), 4 (which has no destroy) with disconnect().
 */
type NodeRedisFamily = RedisClient & {
  on(event: 'error', listener: () => void): unknown
  connect(): Promise<unknown>
  get(key: string): Promise<unknown>
} & ({ destroy(): unknown } | { disconnect(): Promise<unknown> })

const nodeRedisLike =
  <T>(create: (target: T) => NodeRedisFamily) =>
  async (target: T): Promise<Connection> => {
    const client = create(target)
    client.on('error', () => {})
    await client.connect()
    const close = async () => void (await ('destroy' in client ? client.destroy() : client.disconnect()))
    return { client, get: (key: string) => client.get(key), close }
  }

const majors: Major[] = [
  { name: 'ioredis 5', pkg: 'ioredis', major: 5, connect: ioredisLike((url) => new IORedis5(url)) },
  { name: 'ioredis 6', pkg: 'ioredis6', major: 6, connect: ioredisLike((url) => new IORedis6(url)) },
  { name: 'iovalkey', pkg: 'iovalkey', major: 0, connect: ioredisLike((url) => new Valkey(url)) },
  { name: 'node-redis 4', pkg: 'redis4', major: 4, connect: nodeRedisLike((url) => createClient4({ url })) },
  { name: 'node-redis 5', pkg: 'redis', major: 5, connect: nodeRedisLike((url) => createClient5({ url })) },
  { name: 'node-redis 6', pkg: 'redis6', major: 6, connect: nodeRedisLike((url) => createClient6({ url })) },
  // RESP3 changes reply shapes and delivers pub/sub as push messages on the same protocol.
  { name: 'node-redis 6, RESP3', pkg: 'redis6', major: 6, connect: nodeRedisLike((url) => createClient6({ url, RESP: 3 })) },
]

const installedVersion = (pkg: string): string => (createRequire(import.meta.url)(`${pkg}/package.json`) as { version: string }).version

/**
 * The core subset, registered inside a describe: `open` gives a connected client, `prefix` keeps
 * the resources of one client apart from the others' on the shared server.
 */
function coreSuite(prefix: string, open: () => Promise<Connection>): void {
  let conn: Connection
  let locks: Locks
  const r = (name: string) => `${prefix}:${name}`
  beforeAll(async () => {
    conn = await open()
    locks = createLocks({ redis: conn.client, ttl: 5_000, wait: 4_000 })
  })
  afterAll(async () => {
    await locks?.close()
    await conn?.close()
  })

  it('acquires, wakes a waiter on release, and hands out increasing fences', async () => {
    const first = await locks.acquire(r('lock'))
    expect(first.fence).toBeGreaterThan(0)
    const acquires = recordAcquires()
    const waiting = locks.acquire(r('lock'))
    await expect.poll(async () => (await locks.inspect(r('lock'))).waiters).toBe(1)
    expect(await first.release()).toBe(true)
    const second = await waiting
    acquires.stop()
    // It waited, and went on because of the release (its message, or the look it took once its
    // channel was subscribed), not because the re-check after the 5 s ttl ran out.
    expect(acquires.of(r('lock')).map((e) => [e.outcome, e.contended])).toEqual([['acquired', true]])
    expect(acquires.wakes(r('lock'))).not.toContain('recheck')
    expect(second.fence).toBeGreaterThan(first.fence)
    expect(await first.release()).toBe(false)
    await second.extend(5_000) // throws LockLostError if refused
    expect(await second.release()).toBe(true)
  })

  it('tryAcquire: null while held, a lease once free', async () => {
    const held = await locks.acquire(r('try'))
    expect(await locks.tryAcquire(r('try'))).toBeNull()
    expect(await locks.release(r('try'), held.token)).toBe(true)
    const lease = await locks.tryAcquire(r('try'))
    expect(lease?.fence).toBeGreaterThan(held.fence)
    expect(await lease?.release()).toBe(true)
  })

  it('claimFence and fencedSet refuse a stale fence', async () => {
    const key = r('balance')
    expect(await claimFence(conn.client, key, 20)).toBe(true)
    expect(await fencedSet(conn.client, key, 'stale', 10)).toBe(false)
    expect(await claimFence(conn.client, key, 10)).toBe(false)
    expect(await fencedSet(conn.client, key, 'fresh', 20)).toBe(true)
    expect(await conn.get(key)).toBe('fresh')
  })

  it('withLock runs once and releases; close() refuses new calls and leaves the client open', async () => {
    expect(await locks.withLock(r('with'), (lease) => lease.fence)).toBeGreaterThan(0)
    expect((await locks.inspect(r('with'))).held).toBe(false)
    const other = createLocks({ redis: conn.client })
    await other.close()
    await expect(other.acquire(r('closed'))).rejects.toBeInstanceOf(ClosedError)
    expect(await conn.get(r('balance'))).toBe('fresh')
  })
}

describeRedis('every supported client major', (server) => {
  describe.each(majors)('$name', (major) => {
    it('is the major it claims to be', () => {
      expect(Number(installedVersion(major.pkg).split('.')[0])).toBe(major.major)
    })
    coreSuite(major.name, () => major.connect(server.url))
  })
})

interface Sentinel {
  host: string
  port: number
  stop(): Promise<void>
}

/** `redis-server sentinel.conf --sentinel` on a free port, monitoring `master` as `mymaster`. */
async function startSentinel(master: RedisProcess): Promise<Sentinel> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-sentinel-'))
  const port = await freePort()
  const conf = path.join(dir, 'sentinel.conf') // rewritten by the sentinel: must be writable
  writeFileSync(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor mymaster ${master.host} ${master.port} 1`,
      'sentinel down-after-milliseconds mymaster 5000',
      '',
    ].join('\n'),
  )
  const child: ChildProcess = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' })
  // Never outlive the test process, even if it ends without running afterAll.
  const killOnExit = () => child.kill('SIGKILL')
  process.once('exit', killOnExit)
  const stop = async () => {
    process.off('exit', killOnExit)
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  }
  // Ready once it names the master.
  const probe = new IORedis5({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 50 })
  probe.on('error', () => {})
  try {
    await until(
      `sentinel on port ${port} reports its master`,
      async () => {
        const reply = await probe.call('SENTINEL', 'get-master-addr-by-name', 'mymaster').catch(() => null)
        return Array.isArray(reply) && Number(reply[1]) === master.port
      },
      { timeout: 10_000, every: 100 },
    )
  } catch (err) {
    await stop()
    throw err
  } finally {
    probe.disconnect()
  }
  return { host: '127.0.0.1', port, stop }
}

const viaSentinel: { name: string; connect(sentinel: Sentinel): Promise<Connection> }[] = [
  { name: 'ioredis 5', connect: ioredisLike((s: Sentinel) => new IORedis5({ sentinels: [{ host: s.host, port: s.port }], name: 'mymaster' })) },
  { name: 'ioredis 6', connect: ioredisLike((s: Sentinel) => new IORedis6({ sentinels: [{ host: s.host, port: s.port }], name: 'mymaster' })) },
  { name: 'iovalkey', connect: ioredisLike((s: Sentinel) => new Valkey({ sentinels: [{ host: s.host, port: s.port }], name: 'mymaster' })) },
  {
    name: 'node-redis 5 createSentinel',
    connect: nodeRedisLike((s: Sentinel) => createSentinel5({ name: 'mymaster', sentinelRootNodes: [{ host: s.host, port: s.port }] })),
  },
  {
    name: 'node-redis 6 createSentinel',
    connect: nodeRedisLike((s: Sentinel) => createSentinel6({ name: 'mymaster', sentinelRootNodes: [{ host: s.host, port: s.port }] })),
  },
]

describe.skipIf(!requireRedisOrSkip())('through Redis Sentinel', () => {
  let master: RedisProcess
  let sentinel: Sentinel
  beforeAll(async () => {
    master = await startRedis()
    sentinel = await startSentinel(master)
  })
  afterAll(async () => {
    await sentinel?.stop()
    await master?.stop()
  })

  describe.each(viaSentinel)('$name', (variant) => {
    coreSuite(`sentinel:${variant.name}`, () => variant.connect(sentinel))
  })

  it("node-redis createSentinel: fencelock shares the sentinel's pub/sub connection and leaves the user's own subscriptions alone", async () => {
    const client = createSentinel5({ name: 'mymaster', sentinelRootNodes: [{ host: sentinel.host, port: sentinel.port }] })
    client.on('error', () => {})
    await client.connect()
    const heard: string[] = []
    try {
      await client.subscribe('user-channel', (message) => void heard.push(message))
      const locks = createLocks({ redis: client, ttl: 5_000, wait: 4_000 })
      const held = await locks.acquire('sentinel-pubsub')
      const waiting = locks.acquire('sentinel-pubsub') // subscribes to the wake-up channel
      await expect.poll(async () => (await locks.inspect('sentinel-pubsub')).waiters).toBe(1)
      const ours = async () => (await master.cli('PUBSUB', 'CHANNELS')).split('\n').filter((c) => c.includes('sentinel-pubsub'))
      await expect.poll(ours).toHaveLength(1) // the waiter listens on the sentinel's pub/sub connection
      await held.release()
      await (await waiting).release()
      await locks.close()
      const channels = await master.cli('PUBSUB', 'CHANNELS')
      // fencelock's wake-up channel is gone (the sentinel's own hello channel stays)
      expect(channels.split('\n').filter((c) => c && !c.startsWith('__sentinel__'))).toEqual(['user-channel'])
      expect(await ours()).toEqual([])
      await master.cli('PUBLISH', 'user-channel', 'still here')
      await expect.poll(() => heard).toEqual(['still here'])
    } finally {
      client.destroy()
    }
  })
})

describe('values that are not a supported client', () => {
  const refusal = (call: () => unknown): InvalidArgumentError => {
    try {
      call()
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidArgumentError)
      return err as InvalidArgumentError
    }
    throw new Error('expected an InvalidArgumentError')
  }

  it('a URL string is refused with how to make a client from it, without echoing a password', async () => {
    for (const make of [
      // @ts-expect-error: a URL is not a client
      (url: string) => createLocks({ redis: url }),
      // @ts-expect-error: nor in quorum mode
      (url: string) => createLocks({ redis: [url] }),
    ]) {
      const { message } = refusal(() => make('redis://app:s3cret@127.0.0.1:6379/0'))
      expect(message).toMatch(/`redis(\[0\])?` to be a Redis client/)
      expect(message).toContain('new Redis(url)')
      expect(message).toContain('createClient({ url }).connect()')
      expect(message).toContain('redis://app:***@127.0.0.1:6379/0')
      expect(message).not.toContain('s3cret')
    }
    // @ts-expect-error: fencedSet and claimFence take a client too
    const err = await fencedSet('rediss://localhost', 'k', 'v', 1).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(InvalidArgumentError)
    expect((err as Error).message).toContain('new Redis(url)')
  })

  it('connection options, other values and unknown objects are refused with what to pass instead', () => {
    // @ts-expect-error: options are not a client
    expect(refusal(() => createLocks({ redis: { host: '127.0.0.1', port: 6379 } })).message).toContain('new Redis({ host, port })')
    // @ts-expect-error: nor a number
    expect(refusal(() => createLocks({ redis: 6379 })).message).toMatch(/got 6379.*new Redis\(url\)/)
    // @ts-expect-error: nor an unknown object
    expect(refusal(() => createLocks({ redis: { foo: 1 } })).message).toMatch(/ioredis.*iovalkey.*node-redis.*createClient/)
  })

  it('a node-redis client pool is refused: it has no connection of its own for pub/sub', () => {
    const pool = createClientPool5({ url: 'redis://127.0.0.1:1' })
    // @ts-expect-error: a pool is not one of the client shapes
    expect(refusal(() => createLocks({ redis: pool })).message).toMatch(/createClientPool.*createClient\(/)
  })
})

const clusterClients: { name: string; connect(cluster: RedisCluster): Promise<Connection> }[] = [
  { name: 'ioredis 5', connect: ioredisLike((c: RedisCluster) => new IORedisCluster5([{ host: '127.0.0.1', port: c.nodes[0]!.port }])) },
  { name: 'ioredis 6', connect: ioredisLike((c: RedisCluster) => new IORedisCluster6([{ host: '127.0.0.1', port: c.nodes[0]!.port }])) },
  { name: 'iovalkey', connect: ioredisLike((c: RedisCluster) => new ValkeyCluster([{ host: '127.0.0.1', port: c.nodes[0]!.port }])) },
  { name: 'node-redis 4', connect: nodeRedisLike((c: RedisCluster) => createCluster4({ rootNodes: [{ url: c.nodes[0]!.url }] })) },
  { name: 'node-redis 5', connect: nodeRedisLike((c: RedisCluster) => createCluster5({ rootNodes: [{ url: c.nodes[0]!.url }] })) },
  { name: 'node-redis 6', connect: nodeRedisLike((c: RedisCluster) => createCluster6({ rootNodes: [{ url: c.nodes[0]!.url }] })) },
]

describe.skipIf(!requireRedisOrSkip())('on a Redis Cluster', () => {
  const cluster = useCluster({ masters: 3 })

  describe.each(clusterClients)('$name', (variant) => {
    coreSuite(`cluster:${variant.name}`, () => variant.connect(cluster))
  })
})
