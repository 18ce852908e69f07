// Group commit on real redis-servers: acquisitions (and releases) issued in one turn of the event
// loop for one node share one script call (counted with INFO commandstats, or by script in the
// SLOWLOG), each still gets its own answer (its own lease and fence, a refusal, an error met by it
// alone), on one node with either client (ioredis with auto-pipelining too), per slot on a Redis
// Cluster and per node in quorum mode. The batch scripts are checked against the single scripts
// directly: each entry gets what its own script, run in the batch's order, would have answered.
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, RedisError, type Lease, type Locks, type RedisClient } from '../../src/index.js'
import { mutexKeys } from '../../src/primitives/mutex/mutex.js'
import { scripts, type LuaScript } from '../../src/lua/index.js'
import { clusterSlot } from '../../src/util/keys.js'
import { adapters, type TestClient } from '../../harness/clients.js'
import { scriptCalls } from '../../harness/commandstats.js'
import { mature, requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { clusterAdapters, useClusterClient } from '../../harness/cluster-clients.js'
import { describeRedis, useCluster, useFlushedClient } from '../../harness/per-adapter.js'
import { closeQuietly, tokenIn, uniquePrefix, until } from '../../harness/util.js'

const names = (count: number, tag: string) => Array.from({ length: count }, (_, i) => `${tag}${i}`)

/** How often each script ran since the SLOWLOG was reset (every command is logged: see `logEverything`). */
async function scriptRuns(client: Redis, script: LuaScript): Promise<number> {
  const log = (await client.call('SLOWLOG', 'GET', '-1')) as [number, number, number, string[]][]
  return log.filter(
    ([, , , args]) =>
      (args[0]?.toUpperCase() === 'EVALSHA' && args[1] === script.sha) ||
      (args[0]?.toUpperCase() === 'EVAL' && args[1]?.startsWith(script.source.slice(0, 60))),
  ).length
}

async function logEverything(client: Redis): Promise<void> {
  await client.call('CONFIG', 'SET', 'slowlog-log-slower-than', '0', 'slowlog-max-len', '10000')
  await client.call('SLOWLOG', 'RESET')
}

describeRedis('group commit', (server) => {
  const variants: { name: string; connect(): Promise<TestClient> }[] = [
    ...adapters.map((adapter) => ({ name: adapter.name, connect: () => adapter.connect(server.url) })),
    {
      name: 'ioredis with enableAutoPipelining',
      async connect() {
        const client = new Redis(server.url, { enableAutoPipelining: true })
        client.on('error', () => {})
        return {
          adapter: 'ioredis',
          raw: client,
          command: (name, ...args) => client.call(String(name), ...args),
          quit: async () => void (await client.quit()),
          disconnect: async () => client.disconnect(),
        }
      },
    },
  ]

  describe.each(variants)('$name', (variant) => {
    let client: TestClient
    const instances: Locks[] = []
    /** A locks instance on the variant's client, closed after the suite if its test did not close it. */
    const open = (prefix: string) => {
      const locks = createLocks({ redis: client.raw, prefix })
      instances.push(locks)
      return locks
    }
    beforeAll(async () => {
      client = await variant.connect()
    })
    afterAll(async () => {
      await closeQuietly(instances)
      await client?.quit()
    })

    it('20 acquisitions of distinct keys in one turn make three script calls (8 sent at once, 8 more, the last 4 at the end of the turn), each with its own lease and fence; their releases as many', async () => {
      const prefix = uniquePrefix('group')
      const locks = open(prefix)
      // Loads the scripts first (a first call is an EVAL), so that the counts below are the batches'.
      await (await locks.acquire('warm')).release()
      await Promise.all([(await locks.acquire('warm-a')).release(), locks.acquire('warm-b').then((l) => l.release())])
      const resources = names(20, 'g')
      await server.redis.cli('CONFIG', 'RESETSTAT')
      const leases = await Promise.all(
        resources.map((name, i) => (i % 2 === 0 ? locks.acquire(name, { ttl: 10_000 }) : locks.tryAcquire(name, { ttl: 10_000 }))),
      )
      expect(await scriptCalls(server.redis)).toBe(3)
      expect(leases.every((l) => l?.held)).toBe(true)
      const held = leases as Lease[]
      expect(new Set(held.map((l) => l.token)).size).toBe(20)
      expect(new Set(held.map((l) => l.fence)).size).toBe(20)
      for (const [i, lease] of held.entries()) expect(tokenIn(await client.command('GET', mutexKeys(prefix, resources[i]!).lock))).toBe(lease.token)
      // Each lease's fence is its own resource's: the next holder of that resource gets a larger one.
      const fences = held.map((l) => l.fence)

      await server.redis.cli('CONFIG', 'RESETSTAT')
      expect(await Promise.all(held.map((l) => l.release()))).toEqual(held.map(() => true))
      expect(await scriptCalls(server.redis)).toBe(3)
      for (const name of resources) expect(await client.command('EXISTS', mutexKeys(prefix, name).lock)).toBe(0)
      const again = await Promise.all(resources.map((name) => locks.acquire(name)))
      for (const [i, lease] of again.entries()) expect(lease.fence).toBeGreaterThan(fences[i]!)
      await Promise.all(again.map((l) => l.release()))
      await locks.close()
    })

    it('100 acquisitions in one turn: 8 go at once, 8 more, and with two batches unanswered the other 84 share one call at the end of the turn', async () => {
      const prefix = uniquePrefix('group-eager')
      const locks = open(prefix)
      await (await locks.acquire('warm')).release()
      await Promise.all([(await locks.acquire('warm-a')).release(), locks.acquire('warm-b').then((l) => l.release())])
      const direct = new Redis(server.url)
      await logEverything(direct)
      const leases = await Promise.all(names(100, 'e').map((name) => locks.tryAcquire(name, { ttl: 10_000 })))
      const log = (await direct.call('SLOWLOG', 'GET', '-1')) as [number, number, number, string[]][]
      // Each call's entries: its keys (4 per attempt) are its numkeys argument.
      const sizes = log
        .filter(([, , , args]) => args[0]?.toUpperCase() === 'EVALSHA' && args[1] === scripts.mutexAcquireMany.sha)
        .map(([, , , args]) => Number(args[2]) / 4)
        .reverse()
      expect(sizes).toEqual([8, 8, 84])
      expect(leases.every((l) => l?.held)).toBe(true)
      await Promise.all(leases.map((l) => l!.release()))
      direct.disconnect()
      await locks.close()
    })

    it('one batch grants some entries and refuses others; an entry that meets an error fails alone, as it fails alone', async () => {
      const prefix = uniquePrefix('group-mix')
      const locks = open(prefix)
      await (await locks.acquire('warm')).release()
      const resources = names(10, 'm')
      const taken = new Set([1, 4, 7])
      for (const i of taken) await client.command('SET', mutexKeys(prefix, resources[i]!).lock, 'someone-else', 'PX', 60_000)
      // A lock key of the wrong type: its script fails with WRONGTYPE.
      await client.command('RPUSH', mutexKeys(prefix, resources[9]!).lock, 'x')

      await server.redis.cli('CONFIG', 'RESETSTAT')
      const outcomes = await Promise.allSettled(resources.map((name) => locks.tryAcquire(name, { ttl: 10_000 })))
      // The first 8 at once, the other 2 at the end of the turn.
      expect(await scriptCalls(server.redis)).toBe(2)
      for (const [i, outcome] of outcomes.entries()) {
        if (i === 9) {
          expect(outcome.status).toBe('rejected')
          expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(RedisError)
          expect(String((outcome as PromiseRejectedResult).reason.message)).toMatch(/WRONGTYPE/)
        } else if (taken.has(i)) {
          expect(outcome).toEqual({ status: 'fulfilled', value: null })
        } else {
          expect(outcome.status).toBe('fulfilled')
          expect((outcome as PromiseFulfilledResult<Lease>).value.held).toBe(true)
        }
      }
      for (const i of taken) expect(await client.command('GET', mutexKeys(prefix, resources[i]!).lock)).toBe('someone-else')
      // Alone in its turn, the same entry fails the same way.
      const alone = await locks.tryAcquire(resources[9]!).catch((err: unknown) => err)
      expect(alone).toBeInstanceOf(RedisError)
      expect((alone as RedisError).message).toMatch(/WRONGTYPE/)
      await locks.close({ release: true })
    })

    it('a release-many where some tokens no longer hold: those answer false and leave the next holder alone', async () => {
      const prefix = uniquePrefix('group-release')
      const locks = open(prefix)
      const resources = names(8, 'r')
      const leases = await Promise.all(resources.map((name) => locks.acquire(name, { ttl: 10_000 })))
      await client.command('DEL', mutexKeys(prefix, resources[2]!).lock)
      await client.command('SET', mutexKeys(prefix, resources[5]!).lock, 'next-holder', 'PX', 60_000)
      await server.redis.cli('CONFIG', 'RESETSTAT')
      const released = await Promise.all(leases.map((l) => l.release()))
      expect(await scriptCalls(server.redis)).toBe(1)
      expect(released).toEqual(resources.map((_, i) => i !== 2 && i !== 5))
      expect(await client.command('GET', mutexKeys(prefix, resources[5]!).lock)).toBe('next-holder')
      for (const i of [0, 1, 3, 4, 6, 7]) expect(await client.command('EXISTS', mutexKeys(prefix, resources[i]!).lock)).toBe(0)
      await locks.close()
    })

    it('a lone acquisition and a lone release go as the single scripts', async () => {
      const prefix = uniquePrefix('group-lone')
      const locks = open(prefix)
      await (await locks.acquire('warm')).release()
      const direct = new Redis(server.url)
      await logEverything(direct)
      const lease = await locks.acquire('lone')
      await lease.release()
      expect(await scriptRuns(direct, scripts.mutexAcquire)).toBe(1)
      expect(await scriptRuns(direct, scripts.mutexRelease)).toBe(1)
      expect(await scriptRuns(direct, scripts.mutexAcquireMany)).toBe(0)
      expect(await scriptRuns(direct, scripts.mutexReleaseMany)).toBe(0)
      direct.disconnect()
      await locks.close()
    })
  })

  describe('the batch scripts answer each entry as its single script would, in the batch order', () => {
    const client = useFlushedClient(server)
    const run = (script: LuaScript, keys: readonly string[], args: readonly (string | number)[]) =>
      client.command('EVAL', script.source, keys.length, ...keys, ...args)
    const k = (name: string) => mutexKeys('t:', name)
    const all = (name: string) => [k(name).lock, k(name).fence, k(name).queue, k(name).queueExpiry]
    /** Fences and retry hints depend on the clock: a grant's fence as 'fence', a retry as 'retry'. */
    const shape = (reply: unknown) =>
      Array.isArray(reply) && reply.length === 2 && (reply[0] === 1 || reply[0] === 0)
        ? [reply[0], reply[0] === 0 ? 'retry' : Number(reply[1]) > 1e12 ? 'fence' : reply[1]]
        : reply
    const state = async () =>
      Promise.all(
        'abcde'
          .split('')
          .map(async (n) => [
            await client.command('TYPE', k(n).lock),
            (await client.command('TYPE', k(n).lock)) === 'string' ? await client.command('GET', k(n).lock) : null,
            await client.command('ZRANGE', k(n).queue, 0, -1),
          ]),
      )

    it('mutex-acquire-many: free, held by another, a retry of the holder, a waiter behind another, twice the same lock, a key of the wrong type', async () => {
      const setup = async () => {
        await client.command('FLUSHALL')
        await client.command('SET', k('b').lock, 'other', 'PX', 5_000)
        await client.command('SET', k('c').lock, 'me', 'PX', 5_000)
        await client.command('SET', k('c').fence, '42', 'PX', 5_000)
        await client.command('RPUSH', k('e').lock, 'x')
      }
      const attempts: [name: string, token: string, waiter: string][] = [
        ['a', 't1', ''],
        ['b', 't2', 'w:1'],
        ['c', 'me', ''],
        ['b', 't3', 'w:2'], // in line behind w:1
        ['a', 't4', 'w:3'], // a was just granted to t1 in this batch
        ['e', 't5', ''],
        ['d', 't6', 'w:4'],
      ]
      const args = (token: string, waiter: string) => [token, 10_000, 60_000, waiter, 1_000, '', '']
      await setup()
      const alone: unknown[] = []
      for (const [name, token, waiter] of attempts)
        alone.push(await run(scripts.mutexAcquire, all(name), args(token, waiter)).catch((err: Error) => ({ error: err.message })))
      const after = await state()
      await setup()
      // The batch takes retention, grace and the holder's label once (none here: bare tokens, as the
      // single script called without one writes), then token, ttl, waiter, score and maxTtl per entry.
      const many = (await run(
        scripts.mutexAcquireMany,
        attempts.flatMap(([name]) => all(name)),
        [60_000, 1_000, '', ...attempts.flatMap(([, token, waiter]) => [token, 10_000, waiter, '', ''])],
      )) as unknown[]
      expect(alone.map(shape)).toEqual([
        [1, 'fence'],
        [0, 'retry'],
        [1, 42],
        [0, 'retry'],
        [0, 'retry'],
        expect.objectContaining({ error: expect.stringMatching(/WRONGTYPE/) }),
        [1, 'fence'],
      ])
      expect(many.slice(0, 5).map(shape)).toEqual(alone.slice(0, 5).map(shape))
      expect(many[5]).toEqual([null, expect.stringMatching(/WRONGTYPE/)])
      expect(shape(many[6])).toEqual(shape(alone[6]))
      expect(await state()).toEqual(after)
      // The two grants of a fresh lock in one batch get increasing fences, as one after the other would.
      const fences = [many[0], many[6]].map((r) => Number((r as unknown[])[1]))
      expect(fences[1]).toBeGreaterThan(fences[0]!)
    })

    it('mutex-acquire-many asks the server for the time once per call; 12 waiters queued by one call keep the order of its entries', async () => {
      await client.command('SET', k('held').lock, 'other', 'PX', 5_000)
      const waiters = Array.from({ length: 12 }, (_, i) => `w:${i + 1}`)
      const resources = ['f1', 'f2', 'f3']
      await client.command('CONFIG', 'RESETSTAT')
      const replies = (await run(
        scripts.mutexAcquireMany,
        [...resources.flatMap(all), ...waiters.flatMap(() => all('held'))],
        [60_000, 1_000, '', ...resources.flatMap((_, i) => [`t${i}`, 10_000, '', '', '']), ...waiters.flatMap((w) => ['t', 10_000, w, '', ''])],
      )) as unknown[][]
      const stats = String(await client.command('INFO', 'commandstats'))
      expect(/cmdstat_time:calls=(\d+)/.exec(stats)?.[1]).toBe('1')
      expect(replies.slice(0, 3).map((r) => r[0])).toEqual([1, 1, 1])
      // The queue in entry order ("w:10" sorts before "w:2" as a string: equal scores would not keep it).
      expect(await client.command('ZRANGE', k('held').queue, 0, -1)).toEqual(waiters)
      const scores = ((await client.command('ZRANGE', k('held').queue, 0, -1, 'WITHSCORES')) as string[]).filter((_, i) => i % 2 === 1).map(Number)
      for (let i = 1; i < scores.length; i++) expect(scores[i]).toBeGreaterThan(scores[i - 1]!)
      // The fences of one call: each its resource's own.
      const fences = replies.slice(0, 3).map((r) => Number(r[1]))
      expect(new Set(fences).size).toBe(3)
    })

    it('mutex-acquire-many on a quorum node: each entry carries the node facts, as mutex-acquire does', async () => {
      const alone = (await run(scripts.mutexAcquire, all('a'), ['t1', 10_000, 60_000, 'w:1', 1_000, '123', 30_000])) as unknown[]
      await client.command('FLUSHALL')
      const [many] = (await run(scripts.mutexAcquireMany, all('a'), [60_000, 1_000, '', 't1', 10_000, 'w:1', '123', 30_000])) as unknown[][]
      expect(many!.length).toBe(alone.length)
      expect([many![0], many![3]]).toEqual([alone[0], alone[3]])
      // A grant with nobody in line takes no place (mutex-undo puts it back if the quorum fails).
      expect(await client.command('EXISTS', k('a').queue, k('a').queueExpiry)).toBe(0)
      // A grant in a line keeps the waiter's place until its confirm: the line lives as long as it.
      await client.command('FLUSHALL')
      await client.command('ZADD', k('a').queue, 123, 'w:1')
      await client.command('ZADD', k('a').queueExpiry, Date.now() + 1_000, 'w:1')
      const [inLine] = (await run(scripts.mutexAcquireMany, all('a'), [60_000, 1_000, '', 't1', 10_000, 'w:1', '123', 30_000])) as unknown[][]
      expect(inLine![0]).toBe(1)
      expect(await client.command('ZRANGE', k('a').queue, 0, -1)).toEqual(['w:1'])
      const until = Number(await client.command('ZSCORE', k('a').queueExpiry, 'w:1'))
      expect(until).toBeGreaterThan(Date.now() + 10_000)
      expect([await client.command('PEXPIRETIME', k('a').queue), await client.command('PEXPIRETIME', k('a').queueExpiry)]).toEqual([until, until])
      // A second waiter granted later (the first left) in a line that still holds another waiter
      // keeps the line alive as long as the longer-lived of the two.
      await client.command('DEL', k('a').lock)
      await client.command('ZADD', k('a').queue, 0, 'w:0')
      await client.command('ZADD', k('a').queueExpiry, until + 60_000, 'w:0')
      await client.command('ZREM', k('a').queue, 'w:1')
      await client.command('ZREM', k('a').queueExpiry, 'w:1')
      await run(scripts.mutexAcquire, all('a'), ['t2', 10_000, 60_000, 'w:2', 1_000, '-1', 30_000])
      expect(await client.command('PEXPIRETIME', k('a').queue)).toBe(until + 60_000)
      // Three entries of one call read the node's facts from one INFO, and each carries them.
      await client.command('CONFIG', 'RESETSTAT')
      const three = (await run(scripts.mutexAcquireMany, ['b', 'c', 'd'].flatMap(all), [
        60_000,
        1_000,
        '',
        ...['b', 'c', 'd'].flatMap((n) => [`t-${n}`, 10_000, `w:${n}`, '123', 30_000]),
      ])) as unknown[][]
      expect(/cmdstat_info:calls=(\d+)/.exec(String(await client.command('INFO', 'commandstats')))?.[1]).toBe('1')
      expect(three.map((r) => [r[0], r[3]])).toEqual(['b', 'c', 'd'].map(() => [1, alone[3]]))
    })

    it('mutex-release-many: held, expired, taken over, with a waiter to wake, a key of the wrong type', async () => {
      const setup = async () => {
        await client.command('FLUSHALL')
        await client.command('SET', k('a').lock, 'x', 'PX', 5_000)
        await client.command('SET', k('c').lock, 'other', 'PX', 5_000)
        await client.command('SET', k('d').lock, 'y', 'PX', 5_000)
        await client.command('ZADD', k('d').queue, 1, 'i:1')
        await client.command('ZADD', k('d').queueExpiry, '9999999999999', 'i:1')
        await client.command('HSET', k('e').lock, 'f', 'v')
      }
      const leases: [name: string, token: string][] = [
        ['a', 'x'],
        ['b', 'x'], // expired
        ['c', 'z'], // taken over
        ['d', 'y'],
        ['a', 'x'], // released just before, in this batch
        ['e', 'v'],
      ]
      const args = (name: string, token: string) => [token, k(name).channel, 1_000]
      const line = (name: string) => [k(name).lock, k(name).queue, k(name).queueExpiry]
      await setup()
      const alone: unknown[] = []
      for (const [name, token] of leases)
        alone.push(await run(scripts.mutexRelease, line(name), args(name, token)).catch((err: Error) => ({ error: err.message })))
      const after = await state()
      await setup()
      // The batch takes grace once, then token and channel per lease.
      const many = (await run(
        scripts.mutexReleaseMany,
        leases.flatMap(([name]) => line(name)),
        [1_000, ...leases.flatMap(([name, token]) => [token, k(name).channel])],
      )) as unknown[]
      expect(alone.slice(0, 5)).toEqual([1, 0, 0, 1, 0])
      expect(alone[5]).toEqual({ error: expect.stringMatching(/WRONGTYPE/) })
      expect(many.slice(0, 5)).toEqual(alone.slice(0, 5))
      expect(many[5]).toEqual([null, expect.stringMatching(/WRONGTYPE/)])
      expect(await state()).toEqual(after)
    })

    it('mutex-confirm-many: held (fence raised or kept), not held, taken over, the waiter leaving its place, a key of the wrong type', async () => {
      const setup = async () => {
        await client.command('FLUSHALL')
        await client.command('SET', k('a').lock, 'x', 'PX', 5_000)
        await client.command('SET', k('a').fence, '10', 'PX', 5_000)
        await client.command('SET', k('c').lock, 'other', 'PX', 5_000)
        await client.command('SET', k('d').lock, 'y', 'PX', 5_000)
        await client.command('SET', k('d').fence, '99', 'PX', 5_000)
        await client.command('ZADD', k('d').queue, 1, 'w:1', 2, 'w:2')
        await client.command('ZADD', k('d').queueExpiry, '9999999999999', 'w:1', '9999999999999', 'w:2')
        await client.command('HSET', k('e').lock, 'f', 'v')
      }
      const confirms: [name: string, token: string, fence: number, waiter: string][] = [
        ['a', 'x', 20, ''], // raised to 20
        ['b', 'x', 5, ''], // not held
        ['c', 'x', 5, ''], // taken over
        ['d', 'y', 50, 'w:1'], // kept at 99; w:1 leaves the line
        ['a', 'x', 15, ''], // stays at 20 (raised just before, in this batch)
        ['e', 'v', 1, ''],
      ]
      const fences = async () => Promise.all('abd'.split('').map((n) => client.command('GET', k(n).fence)))
      await setup()
      const alone: unknown[] = []
      for (const [name, token, fence, waiter] of confirms)
        alone.push(await run(scripts.mutexConfirm, all(name), [token, fence, 60_000, waiter]).catch((err: Error) => ({ error: err.message })))
      const after = [await state(), await fences()]
      await setup()
      // The batch takes retention once, then token, fence and waiter per lease.
      const many = (await run(
        scripts.mutexConfirmMany,
        confirms.flatMap(([name]) => all(name)),
        [60_000, ...confirms.flatMap(([, token, fence, waiter]) => [token, fence, waiter])],
      )) as unknown[]
      expect(alone.slice(0, 5)).toEqual([1, 0, 0, 1, 1])
      expect(alone[5]).toEqual({ error: expect.stringMatching(/WRONGTYPE/) })
      expect(many.slice(0, 5)).toEqual(alone.slice(0, 5))
      expect(many[5]).toEqual([null, expect.stringMatching(/WRONGTYPE/)])
      expect([await state(), await fences()]).toEqual(after)
      expect(after[1]).toEqual(['20', null, '99'])
      // A fence kept (99 > 50) or raised lives for the retention from the write-back on (set up with 5 s).
      for (const n of 'ad') expect(Number(await client.command('PTTL', k(n).fence))).toBeGreaterThan(5_000)
    })

    it('mutex-leave-many: in line or not, the lock free (the next waiter woken) or held, a key of the wrong type', async () => {
      const setup = async () => {
        await client.command('FLUSHALL')
        for (const n of ['a', 'b']) {
          await client.command('ZADD', k(n).queue, 1, 'i:1', 2, 'i:2')
          await client.command('ZADD', k(n).queueExpiry, '9999999999999', 'i:1', '9999999999999', 'i:2')
        }
        await client.command('SET', k('b').lock, 'held', 'PX', 5_000)
        await client.command('HSET', k('e').queueExpiry, 'f', 'v')
      }
      const leaves: [name: string, waiter: string][] = [
        ['a', 'i:1'], // free: i:2 is woken
        ['b', 'i:1'], // held: nobody is woken
        ['c', 'i:1'], // not in line
        ['a', 'i:1'], // left just before, in this batch
        ['e', 'i:1'],
      ]
      const line = (name: string) => [k(name).lock, k(name).queue, k(name).queueExpiry]
      const expiries = async () => Promise.all('ab'.split('').map((n) => client.command('ZRANGE', k(n).queueExpiry, 0, -1, 'WITHSCORES')))
      const heard: string[] = []
      const listener = new Redis(server.url)
      await listener.psubscribe(`${k('a').channel}*`, `${k('b').channel}*`)
      let markers = 0
      let marked = 0
      listener.on('pmessage', (_pattern, channel: string, message) => {
        if (channel.endsWith(':marker')) marked++
        else heard.push(`${channel} ${message}`)
      })
      // Redis delivers a connection's messages in the order it ran their PUBLISH: once a marker
      // published after the scripts is heard, every wake-up they published has been heard too.
      const heardAll = async () => {
        await client.command('PUBLISH', `${k('a').channel}:marker`, String(++markers))
        await until('the listener heard the marker', () => marked === markers)
      }
      await setup()
      const alone: unknown[] = []
      for (const [name, waiter] of leaves)
        alone.push(await run(scripts.mutexLeave, line(name), [waiter, k(name).channel, 1_000]).catch((err: Error) => ({ error: err.message })))
      const after = [await state(), (await expiries()).map((e) => (e as string[]).filter((_, i) => i % 2 === 0))]
      await heardAll()
      const heardAlone = [...heard]
      await setup()
      // The batch takes grace once, then waiter and channel per entry.
      const many = (await run(
        scripts.mutexLeaveMany,
        leaves.flatMap(([name]) => line(name)),
        [1_000, ...leaves.flatMap(([name, waiter]) => [waiter, k(name).channel])],
      )) as unknown[]
      expect(alone.slice(0, 4)).toEqual([1, 1, 0, 0])
      expect(alone[4]).toEqual({ error: expect.stringMatching(/WRONGTYPE/) })
      expect(many.slice(0, 4)).toEqual(alone.slice(0, 4))
      expect(many[4]).toEqual([null, expect.stringMatching(/WRONGTYPE/)])
      expect([await state(), (await expiries()).map((e) => (e as string[]).filter((_, i) => i % 2 === 0))]).toEqual(after)
      await heardAll()
      listener.disconnect()
      // The free lock's next waiter was woken by both leaves of `a` (the second finds the lock free
      // too), in each run alike; the held lock's never.
      expect(heardAlone.length).toBe(2)
      expect(heardAlone.every((m) => m.startsWith(k('a').channel))).toBe(true)
      expect(heard.slice(2)).toEqual(heardAlone)
    })
  })
})

describe.skipIf(!requireRedisOrSkip())('group commit on a Redis Cluster', () => {
  const cluster = useCluster()
  const ioredis = useClusterClient(clusterAdapters[0]!, cluster)
  let locks: Locks | undefined
  afterAll(() => closeQuietly([locks]))

  it('acquisitions of one turn spread over slots make one script call per slot', async () => {
    const prefix = uniquePrefix('group-cluster')
    locks = createLocks({ redis: ioredis.client.raw, prefix })
    // Three slots, four resources in each (resources of one slot share a hash tag's slot).
    const slotOf = (name: string) => clusterSlot(mutexKeys(prefix, name).lock)
    const bySlot = new Map<number, string[]>()
    for (let i = 0; bySlot.size < 3 || [...bySlot.values()].some((g) => g.length < 4); i++) {
      const name = `c${i}`
      const slot = slotOf(name)
      const group = bySlot.get(slot)
      if (group) {
        if (group.length < 4) group.push(name)
      } else if (bySlot.size < 3) bySlot.set(slot, [name])
    }
    const resources = [...bySlot.values()].flat()
    // The batch scripts loaded on every node (a node that never ran one answers NOSCRIPT first).
    const first = await Promise.all(resources.map((name) => locks!.acquire(name)))
    await Promise.all(first.map((l) => l.release()))
    await Promise.all(cluster.nodes.map((node) => node.cli('CONFIG', 'RESETSTAT')))
    const leases = await Promise.all(resources.map((name) => locks!.acquire(name)))
    const calls = await Promise.all(cluster.nodes.map((node) => scriptCalls(node)))
    expect(calls.reduce((a, b) => a + b, 0)).toBe(3)
    // Each lease has its own resource's fence, larger than that resource's last one. Fences are per
    // resource: two nodes' scripts that run within the same few microseconds may give two resources
    // of different slots the same number, so only the fences of one slot (one script) are compared.
    for (const [i, lease] of leases.entries()) {
      expect(lease.fence).toBeGreaterThan(first[i]!.fence)
      expect((await locks.inspect(lease.resource)).fence).toBe(lease.fence)
    }
    for (const group of bySlot.values()) {
      const fences = group.map((name) => leases[resources.indexOf(name)]!.fence)
      expect(new Set(fences).size).toBe(group.length)
    }
    await Promise.all(leases.map((l) => l.release()))
    await locks.close()
    locks = undefined
  }, 30_000)
})

describe.skipIf(!requireRedisOrSkip())('group commit in quorum mode', () => {
  let servers: RedisProcess[]
  let clients: Redis[]
  let locks: Locks | undefined
  beforeAll(async () => {
    servers = await Promise.all([0, 1, 2].map(() => startRedis()))
    clients = servers.map((s) => new Redis(s.url))
    await mature(servers, 2_000)
  }, 30_000)
  afterAll(async () => {
    await closeQuietly([locks])
    for (const c of clients ?? []) c.disconnect()
    await Promise.all((servers ?? []).map((s) => s.stop()))
  })

  it('acquisitions of one turn make one acquire-many per node, sent when the turn ends (a quorum sends nothing eagerly); each lease is its own', async () => {
    locks = createLocks({ redis: clients as unknown as RedisClient[], prefix: uniquePrefix('group-quorum'), maxTtl: 2_000, ttl: 2_000 })
    await (await locks.acquire('warm', { ttl: 2_000 })).release()
    const watchers = servers.map((s) => new Redis(s.url))
    await Promise.all(watchers.map(logEverything))
    const leases = await Promise.all(names(10, 'q').map((name) => locks!.acquire(name, { ttl: 2_000 })))
    const runs = await Promise.all(watchers.map(async (w) => [await scriptRuns(w, scripts.mutexAcquireMany), await scriptRuns(w, scripts.mutexAcquire)]))
    // Each node got the ten attempts in one call at the end of the turn, not 8 at once and then 2:
    // the quorum's client is the busy side, and an eager call only costs one socket write more per
    // node (a node may be left out once the outcome is decided without it, but the attempts go to
    // every node at once).
    expect(runs).toEqual(servers.map(() => [1, 0]))
    expect(new Set(leases.map((l) => l.token)).size).toBe(10)
    expect(leases.every((l) => l.held)).toBe(true)
    await Promise.all(leases.map((l) => l.release()))
    for (const w of watchers) w.disconnect()
    await locks.close()
    locks = undefined
  }, 30_000)

  it("the confirmations (and places given up) of one turn's winning attempts go to each node as confirm-manys and leave-manys, not one script call each", async () => {
    const prefix = uniquePrefix('group-quorum-confirm')
    locks = createLocks({ redis: clients as unknown as RedisClient[], prefix, maxTtl: 2_000, ttl: 2_000 })
    // Every batch script loaded on every node first (a first call is an EVAL).
    await Promise.all((await Promise.all(names(10, 'warm').map((name) => locks!.acquire(name, { ttl: 2_000 })))).map((l) => l.release()))
    const watchers = servers.map((s) => new Redis(s.url))
    await Promise.all(watchers.map(logEverything))
    const leases = await Promise.all(names(10, 'c').map((name) => locks!.acquire(name, { ttl: 2_000 })))
    // Late answers of a node left out of a decision still reach it, sent before the leases
    // resolved: each connection runs its commands in order, so once its PING answers they ran.
    await Promise.all(clients.map((c) => c.ping()))
    const counts = await Promise.all(
      watchers.map(async (w) => ({
        confirm: await scriptRuns(w, scripts.mutexConfirm),
        confirmMany: await scriptRuns(w, scripts.mutexConfirmMany),
        leave: await scriptRuns(w, scripts.mutexLeave),
        leaveMany: await scriptRuns(w, scripts.mutexLeaveMany),
      })),
    )
    // Each lease was confirmed on a majority (2 or 3 nodes): 10 leases, at least 20 confirmations,
    // sent in a handful of calls (as the replies of each node come in), none alone.
    const calls = counts.reduce((sum, c) => sum + c.confirmMany + c.confirm, 0)
    expect(counts.reduce((sum, c) => sum + c.confirm, 0)).toBe(0)
    expect(calls).toBeGreaterThanOrEqual(2)
    expect(calls).toBeLessThanOrEqual(9)
    // A node left out of a decision has the waiter in its line (its grant keeps the place): it leaves
    // there, in batches too (at most one leave-many per chunk of a turn), never one script call each.
    expect(counts.reduce((sum, c) => sum + c.leave, 0)).toBe(0)
    expect(leases.every((l) => l.held)).toBe(true)
    // Each lease's fence is its own resource's, confirmed on a majority before the lease existed
    // (fences are per resource: two resources may get the same number from two nodes' scripts).
    for (const lease of leases) {
      const stored = await Promise.all(watchers.map(async (w) => Number(await w.get(mutexKeys(prefix, lease.resource).fence))))
      expect(stored.filter((f) => f >= lease.fence).length).toBeGreaterThanOrEqual(2)
      expect(stored).toContain(lease.fence)
    }
    await Promise.all(leases.map((l) => l.release()))
    // Every waiter left every line: no queue is left behind on any node.
    for (const w of watchers) expect([...(await w.keys(`${prefix}*Q`)), ...(await w.keys(`${prefix}*X`))]).toEqual([])
    for (const w of watchers) w.disconnect()
    await locks.close()
    locks = undefined
  }, 30_000)
})
