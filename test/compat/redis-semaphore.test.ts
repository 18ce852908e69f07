// fencelock/redis-semaphore on real redis-servers: what it adds to redis-semaphore's API (a fence
// per acquisition, a signal aborted on loss), what it keeps (the argument checks and messages,
// the key layout an old process reads), the server's clock for its permits, node-redis beside
// ioredis, fencelock's keys in the slot of the peer's key on a Redis Cluster, and Redlock* over
// independent servers. redis-semaphore's own suite runs against it too: peers/redis-semaphore.
import { Cluster, Redis } from 'ioredis'
import * as original from 'redis-semaphore'
import { createClient } from 'redis'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { LostLockError, Mutex, MultiSemaphore, RedlockMutex, RedlockSemaphore, Semaphore, TimeoutError } from '../../src/compat/redis-semaphore/index.js'
import { besideKey, hashPart, keySlot } from '../../src/compat/redis-semaphore/keys.js'
import { describeRedis, useCluster } from '../../harness/per-adapter.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { scriptCalls } from '../../harness/commandstats.js'
import { sleep, until } from '../../harness/util.js'

const FAST = { lockTimeout: 1_000, acquireTimeout: 300, retryInterval: 5 }

describe('fencelock keys beside a peer key (the cluster slot rules)', () => {
  it('wraps a key without a hash tag, keeps a tag the key has, and searches a suffix where neither works', () => {
    expect(besideKey('mutex:a', ':F')).toBe('{mutex:a}:F')
    expect(besideKey('mutex:x{tag}y', ':F')).toBe('mutex:x{tag}y:F')
    expect(hashPart('mutex:x{tag}y:F')).toBe('tag')
    expect(besideKey('mutex:a{b', ':F')).toBe('{mutex:a{b}:F')
    for (const awkward of ['mutex:a}b', 'mutex:a{}b', 'mutex:a{}b{c}']) {
      const key = besideKey(awkward, ':F')
      expect(key.startsWith(`${awkward}:F:`)).toBe(true)
      expect(keySlot(key)).toBe(keySlot(awkward))
    }
  })
})

describeRedis('fencelock/redis-semaphore on one Redis', (server) => {
  let client: Redis
  const extras: Redis[] = []
  /** Another connection, as another process has; closed after the suite. */
  const extra = () => {
    const c = new Redis(server.url)
    extras.push(c)
    return c
  }
  beforeAll(() => {
    client = new Redis(server.url)
  })
  afterAll(async () => {
    // Every connection answers once more: what the tests sent on it (a waiter's leave) is done.
    await Promise.all([client, ...extras].map((c) => c.ping()))
    for (const c of [client, ...extras]) c.disconnect()
  })
  afterEach(() => vi.restoreAllMocks())

  it("checks its arguments with redis-semaphore's messages", () => {
    expect(() => new Mutex(null, 'k')).toThrow('"client" is required')
    expect(() => new Mutex(client, '')).toThrow('"key" is required')
    expect(() => new Mutex(client, 1 as unknown as string)).toThrow('"key" must be a string')
    expect(() => new Mutex(client, 'k', { identifier: '' })).toThrow('identifier must be not empty random string')
    expect(() => new Mutex(client, 'k', { acquiredExternally: true })).toThrow('acquiredExternally=true meanless without custom identifier')
    expect(() => new Mutex(client, 'k', { externallyAcquiredIdentifier: 'a', identifier: 'a' })).toThrow(
      'Invalid usage. Use custom identifier and acquiredExternally: true',
    )
    expect(() => new Semaphore(client, 'k', 0)).toThrow('"limit" is required')
    expect(() => new Semaphore(client, 'k', '2' as unknown as number)).toThrow('"limit" must be a number')
    expect(() => new MultiSemaphore(client, 'k', 3, 0)).toThrow('"permits" is required')
    expect(() => new RedlockMutex(null as unknown as Redis[], 'k')).toThrow('"clients" array is required')
    expect(() => new RedlockSemaphore([client], 'k', 0)).toThrow('"limit" is required')
  })

  it('each acquisition has a larger fence than the one before, whoever held the lock in between', async () => {
    const a = new Mutex(client, 'fence', FAST)
    await a.acquire()
    const first = a.fence!
    expect(first).toBeGreaterThan(0)
    expect(await client.get('mutex:fence')).toBe(a.identifier)
    await a.release()
    const old = new original.Mutex(client, 'fence', FAST)
    await old.acquire()
    await expect(new Mutex(client, 'fence', FAST).acquire()).rejects.toThrow(TimeoutError)
    await expect(new Mutex(client, 'fence', FAST).acquire()).rejects.toThrow('Acquire mutex mutex:fence timeout')
    await old.release()
    await a.acquire()
    expect(a.fence).toBeGreaterThan(first)
    await a.release()
    const s = new MultiSemaphore(client, 'fence', 3, 2, FAST)
    await s.acquire()
    const t = new Semaphore(client, 'fence', 3, FAST)
    await t.acquire()
    expect(t.fence).toBeGreaterThan(s.fence!)
    expect((await client.zrange('semaphore:fence', 0, -1)).sort()).toEqual([`${s.identifier}_0`, `${s.identifier}_1`, t.identifier].sort())
    await Promise.all([s.release(), t.release()])
  })

  it('a lost lock aborts its signal with the LostLockError that onLockLost gets, and isAcquired turns false', async () => {
    const lost: { err: unknown; acquired: boolean }[] = []
    const mutex = new Mutex(client, 'lost', {
      ...FAST,
      refreshInterval: 50,
      onLockLost(err) {
        lost.push({ err, acquired: this.isAcquired })
      },
    })
    await mutex.acquire()
    const { signal } = mutex
    expect(signal.aborted).toBe(false)
    await client.set('mutex:lost', 'someone else')
    await until('the loss is seen', () => signal.aborted, { timeout: 2_000 })
    expect(signal.reason).toBeInstanceOf(LostLockError)
    expect((signal.reason as Error).message).toBe('Lost mutex for key mutex:lost')
    expect(lost).toEqual([{ err: signal.reason, acquired: false }])
    expect(mutex.isAcquired).toBe(false)
    await client.del('mutex:lost')
    await mutex.acquire()
    expect(mutex.signal.aborted, 'a new signal per acquisition').toBe(false)
    await mutex.release()
    expect(mutex.signal.aborted, 'aborted on release').toBe(true)
  })

  it("scores its permits by the Redis server's clock, not this client's: a client an hour ahead neither expires others nor holds forever", async () => {
    const old = new original.Semaphore(client, 'clock', 2, { ...FAST, lockTimeout: 10_000 })
    await old.acquire()
    vi.spyOn(Date, 'now').mockImplementation(() => performance.timeOrigin + performance.now() + 3_600_000)
    const ahead = new Semaphore(client, 'clock', 2, { ...FAST, lockTimeout: 10_000 })
    await ahead.acquire()
    vi.restoreAllMocks()
    const [seconds, micros] = (await client.time()) as [number, number]
    const serverMs = Number(seconds) * 1_000 + Number(micros) / 1_000
    expect(Math.abs(Number(await client.zscore('semaphore:clock', ahead.identifier)) - serverMs)).toBeLessThan(2_000)
    expect(await client.zscore('semaphore:clock', old.identifier), "the old holder's permit is still there").not.toBeNull()
    expect(await new Semaphore(client, 'clock', 2, FAST).tryAcquire()).toBe(false)
    await Promise.all([old.release(), ahead.release()])
  })

  it('runs on a node-redis client as on ioredis, against old processes on ioredis', async () => {
    const node = await createClient({ url: server.url }).connect()
    try {
      const mutex = new Mutex(node, 'node-redis', FAST)
      await mutex.acquire()
      expect(await new original.Mutex(client, 'node-redis', FAST).tryAcquire()).toBe(false)
      await mutex.release()
      const sem = new Semaphore(node, 'node-redis', 1, FAST)
      expect(await sem.tryAcquire()).toBe(true)
      expect(await new original.Semaphore(client, 'node-redis', 1, FAST).tryAcquire()).toBe(false)
      await sem.release()
      expect(await client.zcard('semaphore:node-redis')).toBe(0)
    } finally {
      node.destroy()
    }
  })

  it('waits for a release of upgraded holders without polling (woken by it), and polls every retryInterval while an old process holds the lock', async () => {
    // The waiter gives up (acquireTimeout) long before the holder's lock would expire (lockTimeout).
    const IDLE = { lockTimeout: 10_000, acquireTimeout: 5_000 }
    const commands = async () => Number(/total_commands_processed:(\d+)/.exec(await server.redis.cli('INFO', 'stats'))![1])
    for (const [make, key] of [
      [(c: Redis) => new Mutex(c, 'idle', IDLE), 'mutex:idle'],
      [(c: Redis) => new Semaphore(c, 'idle', 1, IDLE), 'semaphore:idle'],
    ] as const) {
      const holder = make(client)
      await holder.acquire()
      const waiter = make(extra())
      const waiting = waiter.acquire()
      const channel = besideKey(key, ':fencelock:W')
      await until('the waiter listens for the release', async () => (await client.pubsub('NUMSUB', channel))[1] === 1)
      // Until it has parked: until its SUBSCRIBE's reply is read, it looks every retryInterval,
      // as the peer polls (a loaded machine reads that reply late). No command between two looks.
      let last = -1
      await until(
        'the waiter has parked',
        async () => {
          const now = await commands()
          const parked = now === last + 1 // the INFO of the look before is the only command since
          last = now
          return parked
        },
        { every: 100 },
      )
      const before = await commands()
      await sleep(500) // time must pass: nothing may happen meanwhile, which no event can say
      const during = (await commands()) - before - 1
      expect(during, `commands while a drop-in waits 500 ms for ${key}`).toBeLessThanOrEqual(5)
      await holder.release()
      // Its acquireTimeout (5 s) ends before its look at the holder's expiry (10 s): it can only
      // have the lock because the release's message woke it.
      await expect(waiting).resolves.toBeUndefined()
      await waiter.release()
    }
    const old = new original.Mutex(client, 'idle-old', { lockTimeout: 10_000 })
    await old.acquire()
    await server.redis.cli('CONFIG', 'RESETSTAT')
    const polling = new Mutex(client, 'idle-old', { acquireTimeout: 1_500, retryInterval: 10 }).tryAcquire()
    // An old holder wakes nobody: the drop-in polls (an attempt, a script call, every 10 ms).
    await until('the drop-in polls', async () => (await scriptCalls(server.redis)) > 10)
    expect(await polling).toBe(false)
    await old.release()
  })

  it('upgraded waiters get the lock in the order they came (FIFO), and a large MultiSemaphore request is not starved by small ones', async () => {
    const holder = new Mutex(client, 'fifo', { lockTimeout: 10_000 })
    await holder.acquire()
    const order: number[] = []
    const waiters: Promise<void>[] = []
    const inLine = async (key: string) => client.zcard(besideKey(key, ':fencelock:Q'))
    for (let i = 0; i < 5; i++) {
      const mutex = new Mutex(extra(), 'fifo', { lockTimeout: 10_000 })
      waiters.push(
        mutex.acquire().then(async () => {
          order.push(i)
          await mutex.release()
        }),
      )
      // The next one comes once this one stands in line.
      await until(`waiter ${i} stands in line`, async () => (await inLine('mutex:fifo')) === i + 1)
    }
    await holder.release()
    await Promise.all(waiters)
    expect(order).toEqual([0, 1, 2, 3, 4])

    const small = new Semaphore(client, 'fifo', 3, { lockTimeout: 10_000 })
    await small.acquire()
    const big = new MultiSemaphore(extra(), 'fifo', 3, 3, { lockTimeout: 10_000, acquireTimeout: 5_000 })
    const bigGot = big.acquire()
    await until('the request for 3 stands in line', async () => (await inLine('semaphore:fifo')) === 1)
    const newcomers = [0, 1].map(() => new Semaphore(client, 'fifo', 3, { lockTimeout: 10_000, acquireTimeout: 300 }))
    expect(await Promise.all(newcomers.map((n) => n.tryAcquire())), '2 are free, but the waiter for 3 came first').toEqual([false, false])
    await small.release()
    await bigGot
    expect(await client.zcard('semaphore:fifo')).toBe(3)
    await big.release()
  })

  it('acquire(signal) rejects with the signal reason, as redis-semaphore does', async () => {
    const holder = new Mutex(client, 'abort', FAST)
    await holder.acquire()
    await expect(new Mutex(client, 'abort', { ...FAST, acquireTimeout: 5_000 }).acquire(AbortSignal.timeout(20))).rejects.toThrow(
      'The operation was aborted due to timeout',
    )
    await holder.release()
  })
})

describe.skipIf(!requireRedisOrSkip())('fencelock/redis-semaphore on a Redis Cluster', () => {
  const cluster = useCluster({ masters: 3 })
  it('keeps its fence in the slot of the peer key, for plain, tagged and awkward key names', async () => {
    const client = new Cluster([{ host: '127.0.0.1', port: cluster.nodes[0]!.port }])
    client.on('error', () => {})
    try {
      // An awkward name's keys are found by a search of ~16,384 names on average, on the first attempt.
      const options = { ...FAST, acquireTimeout: 3_000 }
      for (const name of ['plain', 'x{tag}y', 'a}b', 'a{}b']) {
        const mutex = new Mutex(client, name, options)
        await mutex.acquire()
        expect(mutex.fence).toBeGreaterThan(0)
        const fenceKey = besideKey(`mutex:${name}`, ':fencelock:F')
        expect(Number(await client.get(fenceKey))).toBe(mutex.fence)
        expect(Number(await client.cluster('KEYSLOT', fenceKey))).toBe(keySlot(fenceKey))
        expect(keySlot(fenceKey)).toBe(Number(await client.cluster('KEYSLOT', `mutex:${name}`)))
        await mutex.release()
        const sem = new MultiSemaphore(client, name, 3, 2, options)
        await sem.acquire()
        expect(await client.zcard(`semaphore:${name}`)).toBe(2)
        await sem.release()
      }
    } finally {
      client.disconnect()
    }
  }, 30_000)
})

describe.skipIf(!requireRedisOrSkip())('fencelock/redis-semaphore Redlock* over 3 independent servers', () => {
  let nodes: RedisProcess[] = []
  let clients: Redis[] = []
  beforeAll(async () => {
    nodes = await Promise.all([0, 1, 2].map(() => startRedis()))
    clients = nodes.map((n) => new Redis(n.url))
  })
  afterAll(async () => {
    for (const c of clients) c.disconnect()
    await Promise.all(nodes.map((n) => n.stop()))
  })

  it('a majority holds it; old Redlock processes are excluded; the fence is the largest the granting nodes gave', async () => {
    const mutex = new RedlockMutex(clients, 'rl', FAST)
    await mutex.acquire()
    expect(await Promise.all(clients.map((c) => c.get('mutex:rl')))).toEqual([mutex.identifier, mutex.identifier, mutex.identifier])
    const fences = await Promise.all(clients.map((c) => c.get('{mutex:rl}:fencelock:F')))
    expect(mutex.fence).toBe(Math.max(...fences.map(Number)))
    expect(await new original.RedlockMutex(clients, 'rl', FAST).tryAcquire()).toBe(false)
    await mutex.release()
    const sem = new RedlockSemaphore(clients, 'rl', 1, FAST)
    expect(await sem.tryAcquire()).toBe(true)
    expect(await new original.RedlockSemaphore(clients, 'rl', 1, FAST).tryAcquire()).toBe(false)
    await sem.release() // resolves once every node answered
    expect(await Promise.all(clients.map((c) => c.zcard('semaphore:rl')))).toEqual([0, 0, 0])
  })
})
