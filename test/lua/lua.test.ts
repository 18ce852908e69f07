// The Lua scripts tested directly, apart from the API: every return code, the fence floor, and
// the fair queue's expiry rules.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { mutexKeys as resourceKeys } from '../../src/primitives/mutex/mutex.js'
import { scripts, type LuaScript } from '../../src/lua/index.js'
import { luaFiles, luaSource } from '../../scripts/lua-source.mjs'
import { parseHeader } from '../../scripts/lua-header.mjs'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { until } from '../../harness/util.js'

describe('script headers', () => {
  // A script's code without its comments (its header among them): what it really uses.
  const code = (source: string) =>
    source
      .split('\n')
      .map((line) => line.replace(/--.*$/, ''))
      .join('\n')
  const uses = (body: string, what: 'KEYS' | 'ARGV') => ({
    byNumber: [...new Set([...body.matchAll(new RegExp(`\\b${what}\\[(\\d+)\\]`, 'g'))].map((m) => Number(m[1])))].sort((a, b) => a - b),
    // An index computed at run time (KEYS[4 + i]), or a count of them (#KEYS): the entries after the named ones.
    computed: new RegExp(`\\b${what}\\[(?!\\d+\\])|#${what}\\b`).test(body),
  })

  const pathOf = new Map(luaFiles().map(({ file, path }) => [file, path]))
  it.each(Object.entries(scripts))('%s uses exactly the KEYS and ARGV its header declares', (_name, script) => {
    const body = code(script.source)
    // The header as the binding's types were generated from it (the binding ships no names).
    const header = parseHeader(script.name, readFileSync(pathOf.get(script.name)!, 'utf8'))
    const entries = [
      ['KEYS', header.keys, header.moreKeys],
      ['ARGV', header.args, header.moreArgs],
    ] as const
    for (const [what, names, more] of entries) {
      const used = uses(body, what)
      if (more === undefined) {
        // No further entries declared: each named one is used by its number, and nothing else.
        expect(used.byNumber, `${script.name} ${what}`).toEqual(names.map((_, i) => i + 1))
        expect(used.computed, `${script.name} ${what} by a computed index`).toBe(false)
      } else {
        // Further entries declared (KEYS[n..]): reached by a computed index; no number beyond the named ones.
        expect(
          used.byNumber.filter((i) => i > names.length),
          `${script.name} ${what}`,
        ).toEqual([])
        expect(used.computed, `${script.name} ${what}[${names.length + 1}..] ${more}`).toBe(true)
      }
    }
  })

  it('embeds the current .lua sources, with their includes expanded, described by their current headers', () => {
    const files = new Map(luaFiles().map(({ file, path }) => [file, path]))
    expect([...files.keys()].sort()).toEqual(
      Object.values(scripts)
        .map((s) => s.name)
        .sort(),
    )
    for (const script of Object.values(scripts)) {
      const path = files.get(script.name)!
      expect(script.source).toBe(luaSource(path))
      expect(script.source).not.toMatch(/^--#include/m)
      const header = parseHeader(script.name, readFileSync(path, 'utf8'))
      expect(header.returns.length).toBeGreaterThan(0)
      // EVALSHA names it by the SHA1 of exactly this source (Redis computes the same).
      expect(script.sha).toBe(createHash('sha1').update(luaSource(path)).digest('hex'))
    }
  })

  const head = (...lines: string[]) => [...lines, 'return 1'].join('\n')
  it.each([
    ['a gap in the KEYS', head('-- KEYS[1] lock: x', '-- KEYS[3] queue: x', '-- Returns 1: ok'), /KEYS\[3\] where KEYS\[2\] comes next/],
    ['ARGV out of order', head('-- ARGV[2] ttl: x', '-- ARGV[1] token: x', '-- Returns 1: ok'), /ARGV\[2\] where ARGV\[1\] comes next/],
    ['an entry without a name', head('-- KEYS[1] lock key', '-- Returns 1: ok'), /name the entry/],
    ['a name that is not camelCase', head('-- KEYS[1] lock_key: x', '-- Returns 1: ok'), /name the entry/],
    ['a name used twice', head('-- ARGV[1] ttl: x', '-- ARGV[2] ttl: y', '-- Returns 1: ok'), /"ttl" is used twice/],
    ['an entry after the further ones', head('-- KEYS[1..] slots: x', '-- KEYS[2] limit: x', '-- Returns 1: ok'), /must be the last KEYS entry/],
    ['an index that is not a number', head('-- ARGV[2i] ttl: x', '-- Returns 1: ok'), /plain number/],
    ['no Returns', head('-- KEYS[1] lock: x'), /says nothing of the reply/],
    ['a reply shape it cannot read', head('-- Returns {1, the fence}: ok'), /reply element "the fence"/],
    ['an optional element before a required one', head('-- Returns {1, young?, fence}: ok'), /only trailing elements may be optional/],
  ])('the embed step refuses a header with %s', (_what, text, message) => {
    expect(() => parseHeader('bad.lua', text)).toThrow(message)
  })

  it('reads names, further entries and reply shapes from a header', () => {
    const text = head(
      '-- KEYS[1] fence: the fence key',
      '--           (continued)',
      '-- KEYS[2..] slots: one per permit',
      '-- ARGV[1] token: x',
      '-- ARGV[2..] channels: x',
      '-- Returns {1, fence, young?, ...rest}: granted',
      '--         where young is ...',
      "--         {0, retry, ''}: refused",
      '--         -1: odd',
    )
    expect(parseHeader('good.lua', text)).toEqual({
      keys: ['fence'],
      moreKeys: 'slots',
      args: ['token'],
      moreArgs: 'channels',
      returns: [
        {
          tuple: [
            { literal: 1 },
            { name: 'fence', rest: false, optional: false },
            { name: 'young', rest: false, optional: true },
            { name: 'rest', rest: true, optional: false },
          ],
        },
        { tuple: [{ literal: 0 }, { name: 'retry', rest: false, optional: false }, { literal: '' }] },
        { literal: -1 },
      ],
    })
  })
})

describe.skipIf(!requireRedisOrSkip())('Lua scripts against a real redis-server', () => {
  let server: RedisProcess
  let redis: Redis
  const k = resourceKeys('t:', 'res')
  const run = (script: LuaScript, keys: string[], args: (string | number)[]) => redis.eval(script.source, keys.length, ...keys, ...args)
  const acquire = (token: string, ttl: number, waiter = '', grace = 2_000) =>
    run(scripts.mutexAcquire, [k.lock, k.fence, k.queue, k.queueExpiry], [token, ttl, 60_000, waiter, grace, '', '']) as Promise<[number, number]>
  const release = (token: string) => run(scripts.mutexRelease, [k.lock, k.queue, k.queueExpiry], [token, k.channel, 2_000]) as Promise<number>
  const serverMicros = async () => {
    const [s, us] = (await redis.call('TIME')) as [string, string]
    return Number(s) * 1e6 + Number(us)
  }

  beforeAll(async () => {
    server = await startRedis()
    redis = new Redis(server.port, { lazyConnect: false })
  })
  afterAll(async () => {
    redis?.disconnect()
    await server?.stop()
  })
  beforeEach(async () => {
    await redis.flushall()
  })

  it('acquire grants a free lock with a fence floored by server time in microseconds', async () => {
    const before = await serverMicros()
    const [ok, fence] = await acquire('a', 5_000)
    const after = await serverMicros()
    expect(ok).toBe(1)
    expect(fence).toBeGreaterThanOrEqual(before)
    expect(fence).toBeLessThanOrEqual(after)
    expect(await redis.get(k.lock)).toBe('a')
    const pttl = await redis.pttl(k.lock)
    expect(pttl).toBeGreaterThan(4_900)
    expect(await redis.get(k.fence)).toBe(String(fence))
    expect(await redis.pttl(k.fence)).toBeGreaterThan(59_000)
  })

  it('acquire refuses a held lock and returns the holder PTTL as the retry hint', async () => {
    await acquire('a', 5_000)
    const [ok, retry] = await acquire('b', 5_000)
    expect(ok).toBe(0)
    expect(retry).toBeGreaterThan(4_900)
    expect(retry).toBeLessThanOrEqual(5_000)
    expect(await redis.get(k.lock)).toBe('a')
  })

  it('a retry with the holder token gets the lock back with its fence and a fresh ttl', async () => {
    const [, fence] = await acquire('a', 1_000)
    await redis.zadd(k.queue, 1, 'w')
    await redis.zadd(k.queueExpiry, Date.now() + 60_000, 'w')
    const [ok, again] = await acquire('a', 30_000, 'w')
    expect(ok).toBe(1)
    expect(again).toBe(fence)
    expect(await redis.pttl(k.lock)).toBeGreaterThan(29_000)
    expect(await redis.zcard(k.queue)).toBe(0)
  })

  it('the fence goes up by one over a stored fence that is ahead of the clock', async () => {
    const ahead = (await serverMicros()) + 1e12
    await redis.set(k.fence, String(ahead))
    const [, fence] = await acquire('a', 1_000)
    expect(fence).toBe(ahead + 1)
    // Stored as given out, with the retention (not the clock's value the script tried first).
    expect(await redis.get(k.fence)).toBe(String(ahead + 1))
    expect(await redis.pttl(k.fence)).toBeGreaterThan(59_000)
    await release('a')
    const [, next] = await acquire('b', 1_000)
    expect(next).toBe(ahead + 2)
  })

  it('the fence stays above the last one when the fence key is gone (restart with no data)', async () => {
    const [, first] = await acquire('a', 1_000)
    await redis.flushall()
    const [, second] = await acquire('b', 1_000)
    expect(second).toBeGreaterThan(first)
  })

  it('release deletes only with the holder token and wakes the head waiter', async () => {
    await acquire('a', 5_000)
    await acquire('w1', 5_000, 'inst:1')
    await acquire('w2', 5_000, 'inst:2')
    const sub = redis.duplicate()
    const messages: string[] = []
    sub.on('message', (_channel, message) => messages.push(message))
    await sub.subscribe(`${k.channel}:inst`)
    // Another process (instance) with nobody next in line hears nothing: no fan-out.
    const others: string[] = []
    const other = redis.duplicate()
    other.on('message', (_channel, message) => others.push(message))
    await other.subscribe(`${k.channel}:other`)
    expect(await release('not-the-token')).toBe(0)
    expect(await redis.get(k.lock)).toBe('a')
    expect(await release('a')).toBe(1)
    expect(await redis.exists(k.lock)).toBe(0)
    expect(await release('a')).toBe(0)
    await until('the wake-up message arrived', () => messages.length > 0)
    // The next waiter, and the one after it on standby in case the next one is dead.
    expect(messages).toEqual(['inst:1 inst:2'])
    // A marker published after the releases comes after anything they sent to the other instance.
    await redis.publish(`${k.channel}:other`, 'marker')
    await until('the marker arrived', () => others.includes('marker'))
    expect(others).toEqual(['marker'])
    other.disconnect()
    // The woken waiter keeps its place only for the grace now, not for the ttl it queued with.
    const expiry = Number(await redis.zscore(k.queueExpiry, 'inst:1'))
    expect(expiry - Math.floor((await serverMicros()) / 1000)).toBeLessThanOrEqual(2_000)
    expect(Number(await redis.zscore(k.queueExpiry, 'inst:2')) - expiry).toBeGreaterThan(2_000)
    sub.disconnect()
  })

  it('a free lock goes to the head of the queue only, in FIFO order', async () => {
    await acquire('a', 5_000)
    expect((await acquire('x', 5_000, 'inst:first'))[0]).toBe(0)
    expect((await acquire('y', 5_000, 'inst:second'))[0]).toBe(0)
    await release('a')
    // Not the head: refused, and told to look again when the head would count as gone: the
    // release left the woken head only its grace.
    const [ok, retry] = await acquire('y', 5_000, 'inst:second')
    expect(ok).toBe(0)
    expect(retry).toBeGreaterThan(1_000)
    expect(retry).toBeLessThanOrEqual(2_000)
    // A single attempt without a place in line does not jump the queue either.
    expect((await acquire('z', 5_000))[0]).toBe(0)
    expect((await acquire('x', 5_000, 'inst:first'))[0]).toBe(1)
    expect(await redis.zrange(k.queue, 0, -1)).toEqual(['inst:second'])
  })

  it('a waiter that stops re-checking loses its place after its grace', async () => {
    await acquire('a', 100)
    await acquire('dead', 100, 'dead-waiter', 50)
    await acquire('live', 100, 'live-waiter', 5_000)
    // The lock expires, and the dead waiter's place (100 ms + 50 ms grace) runs out on the server's clock.
    const deadUntil = Number(await redis.zscore(k.queueExpiry, 'dead-waiter'))
    await until('the lock expired and the dead waiter counts as gone', async () => {
      return (await redis.exists(k.lock)) === 0 && Math.floor((await serverMicros()) / 1000) > deadUntil
    })
    const [ok] = await acquire('live', 1_000, 'live-waiter')
    expect(ok).toBe(1)
    expect(await redis.zcard(k.queue)).toBe(0)
  })

  it('queue keys expire with their last waiter', async () => {
    await acquire('a', 200)
    await acquire('w', 200, 'w', 100)
    const pttl = await redis.pttl(k.queue)
    expect(pttl).toBeGreaterThan(0)
    expect(pttl).toBeLessThanOrEqual(300)
  })

  it('extend moves the expiry only for the holder', async () => {
    await acquire('a', 1_000)
    expect(await run(scripts.mutexExtend, [k.lock], ['b', 60_000])).toBe(0)
    expect(await redis.pttl(k.lock)).toBeLessThanOrEqual(1_000)
    expect(await run(scripts.mutexExtend, [k.lock], ['a', 60_000])).toBe(1)
    expect(await redis.pttl(k.lock)).toBeGreaterThan(59_000)
  })

  it('leave removes a waiter and wakes the next one when the lock is free', async () => {
    await acquire('a', 5_000)
    await acquire('x', 5_000, 'inst:first')
    await acquire('y', 5_000, 'inst:second')
    await release('a')
    const sub = redis.duplicate()
    const messages: string[] = []
    sub.on('message', (_c, m) => messages.push(m))
    await sub.subscribe(`${k.channel}:inst`)
    expect(await run(scripts.mutexLeave, [k.lock, k.queue, k.queueExpiry], ['inst:first', k.channel, 2_000])).toBe(1)
    expect(await run(scripts.mutexLeave, [k.lock, k.queue, k.queueExpiry], ['inst:first', k.channel, 2_000])).toBe(0)
    await until('the wake-up message arrived', () => messages.length > 0)
    expect(messages[0]).toBe('inst:second')
    sub.disconnect()
  })

  it('inspect reports holder, ttl, fence and live waiters', async () => {
    const [, fence] = await acquire('a', 5_000)
    await acquire('x', 5_000, 'w1')
    const [token, pttl, storedFence, waiters] = (await run(scripts.mutexInspect, [k.lock, k.fence, k.queue, k.queueExpiry], [])) as [
      string,
      number,
      string,
      number,
    ]
    expect(token).toBe('a')
    expect(pttl).toBeGreaterThan(4_000)
    expect(Number(storedFence)).toBe(fence)
    expect(waiters).toBe(1)
  })

  it('fenced-set accepts equal and larger fences and refuses smaller ones', async () => {
    const set = (value: string, fence: number) => run(scripts.fencedSet, ['data', '{data}:fence'], [value, fence, 0])
    expect(await set('v10', 10)).toBe(1)
    expect(await set('v10b', 10)).toBe(1)
    expect(await set('v9', 9)).toBe(0)
    expect(await redis.get('data')).toBe('v10b')
    expect(await set('v11', 11)).toBe(1)
    expect(await redis.get('{data}:fence')).toBe('11')
  })

  it('fence-claim accepts equal and larger fences, refuses one below the guard and leaves the guard as it was', async () => {
    // Fences of consecutive leases can differ by exactly 1 (two grants within a microsecond):
    // the boundary is the case that matters.
    const claim = (fence: number) => run(scripts.fenceClaim, ['{claimed}:fence'], [fence, 0])
    expect(await claim(10)).toBe(1)
    expect(await claim(10)).toBe(1)
    expect(await claim(9)).toBe(0)
    expect(await redis.get('{claimed}:fence')).toBe('10')
    expect(await claim(11)).toBe(1)
    expect(await claim(10)).toBe(0)
    expect(await redis.get('{claimed}:fence')).toBe('11')
  })
})
