// The guards (fencedSet, claimFence) when things go wrong, once per client adapter against a real
// redis-server: every error is a FencelockError with the client's error in `cause`, and every
// call has a time bound.
import { describe, expect, it } from 'vitest'
import { claimFence, ClosedError, fencedSet, FencelockError, InvalidArgumentError, KeyTypeError, RedisError } from '../../src/index.js'
import { adapters } from '../../harness/clients.js'
import { requireRedisOrSkip, startRedis } from '../../harness/redis-server.js'
import { useClient, useRedis } from '../../harness/per-adapter.js'

/** The call's outcome, or 'pending' if it has none after `ms`. */
async function settleWithin(call: Promise<unknown>, ms: number): Promise<{ value?: unknown; error?: unknown; elapsed: number } | 'pending'> {
  const started = performance.now()
  let timer: NodeJS.Timeout | undefined
  const outcome = await Promise.race([
    call.then(
      (value) => ({ value, elapsed: performance.now() - started }),
      (error: unknown) => ({ error, elapsed: performance.now() - started }),
    ),
    new Promise<'pending'>((resolve) => (timer = setTimeout(resolve, ms, 'pending'))),
  ])
  clearTimeout(timer)
  return outcome
}

describe.skipIf(!requireRedisOrSkip()).each(adapters)('fencedSet and claimFence with $name', (adapter) => {
  const server = useRedis()
  const t = useClient(adapter, server, { end: 'disconnect' })

  it('refuse bad values with InvalidArgumentError naming the value, before any Redis call', async () => {
    const cases: [() => Promise<unknown>, RegExp][] = [
      [() => fencedSet(t.client.raw, 'k', 'v', -1), /`fence`.*got -1/],
      [() => fencedSet(t.client.raw, 'k', 'v', 1.5), /`fence`.*got 1\.5/],
      [() => fencedSet(t.client.raw, 'k', 'v', '7' as unknown as number), /`fence`.*got "7"/],
      [() => claimFence(t.client.raw, 'k', Number.NaN), /`fence`.*got NaN/],
      [() => fencedSet(t.client.raw, '', 'v', 1), /`key`.*got ""/],
      [() => claimFence(t.client.raw, 42 as unknown as string, 1), /`key`.*got 42/],
      [() => fencedSet(t.client.raw, 'a\uD800', 'v', 1), /`key`.*well-formed/],
      [() => fencedSet(t.client.raw, 'k', 'v\uDC00', 1), /`value`.*well-formed/],
      [() => fencedSet(t.client.raw, 'k', 'v', 1, { px: 0 }), /`px`.*got 0/],
      [() => claimFence(t.client.raw, 'k', 1, { px: '5s' as unknown as number }), /`px`.*got "5s"/],
      [() => fencedSet(t.client.raw, 'k', 'v', 1, { timeout: 0 }), /`timeout`.*got 0/],
      [() => claimFence(t.client.raw, 'k', 1, { timeout: Number.POSITIVE_INFINITY }), /`timeout`.*got Infinity/],
      [() => claimFence(t.client.raw, 'k', 1, { timeout: -5 }), /`timeout`.*got -5/],
      [() => fencedSet(t.client.raw, 'k', 'v', 1, null as unknown as object), /options.*got null/],
      [() => claimFence(t.client.raw, 'k', 1, 'fast' as unknown as object), /options.*got "fast"/],
      // @ts-expect-error: a URL is not a client (a JavaScript caller gets the error below)
      [() => fencedSet('redis://127.0.0.1:6379', 'k', 'v', 1), /`redis`.*got "redis:/],
    ]
    for (const [call, message] of cases) {
      const err = await call().catch((e: unknown) => e)
      expect(err, String(message)).toBeInstanceOf(InvalidArgumentError)
      expect((err as Error).message).toMatch(message)
    }
  })

  it('a data key of another type (list, hash, set, zset, stream): KeyTypeError, and the key and its guard are left as they were', async () => {
    const kinds: [string, string[]][] = [
      ['list', ['RPUSH', 'tlist', 'a', 'b']],
      ['hash', ['HSET', 'thash', 'f', 'v']],
      ['set', ['SADD', 'tset', 'm']],
      ['zset', ['ZADD', 'tzset', '1', 'm']],
      ['stream', ['XADD', 'tstream', '*', 'f', 'v']],
    ]
    for (const [type, [command, key, ...args]] of kinds) {
      await t.client.command('DEL', key!, `{${key}}:fence`)
      await t.client.command(command!, key!, ...args)
      const before = await t.client.command('DUMP', key!)
      for (const call of [() => fencedSet(t.client.raw, key!, 'v', 5), () => fencedSet(t.client.raw, key!, 'v', 5, { px: 60_000 })]) {
        const err = await call().catch((e: unknown) => e)
        expect(err, type).toBeInstanceOf(KeyTypeError)
        expect(err).toBeInstanceOf(FencelockError)
        expect(err).toMatchObject({ code: 'WRONG_TYPE', key, type })
        expect((err as Error).message).toContain(`"${key}" holds a ${type}`)
        expect((err as Error).message).toMatch(/nothing was changed/)
      }
      expect(await t.client.command('TYPE', key!)).toBe(type)
      expect(await t.client.command('DUMP', key!)).toEqual(before)
      expect(await t.client.command('PTTL', key!)).toBe(-1)
      expect(await t.client.command('EXISTS', `{${key}}:fence`)).toBe(0) // no guard written for a refused write
    }
  })

  it('a guard key of another type, or not holding a fence: KeyTypeError naming the guard, for fencedSet and claimFence; nothing changed', async () => {
    // The guard key of `wrong` is `{wrong}:fence`.
    const guards: [string, string[]][] = [
      ['list', ['RPUSH', '{wrong}:fence', 'x']],
      ['string', ['SET', '{wrong}:fence', 'not-a-number']],
    ]
    for (const [type, [command, guard, ...args]] of guards) {
      await t.client.command('DEL', guard!)
      await t.client.command(command!, guard!, ...args)
      await t.client.command('SET', 'wrong', 'kept')
      for (const call of [() => fencedSet(t.client.raw, 'wrong', 'v', 5), () => claimFence(t.client.raw, 'wrong', 5)]) {
        const err = await call().catch((e: unknown) => e)
        expect(err, type).toBeInstanceOf(KeyTypeError)
        expect(err).toMatchObject({ code: 'WRONG_TYPE', key: guard, type })
        expect((err as Error).message).toContain(`"{wrong}:fence"`)
        expect((err as Error).message).toContain('"wrong"')
      }
      expect(await t.client.command('GET', 'wrong')).toBe('kept')
      expect(await t.client.command('TYPE', guard!)).toBe(type)
    }
    await t.client.command('DEL', '{wrong}:fence', 'wrong')
  })

  it('a Redis user without EVAL/EVALSHA: RedisError that names the missing permission', async () => {
    const user = `noscript-${adapter.name}`
    await t.client.command('ACL', 'SETUSER', user, 'reset', 'on', '>pw', '~*', '&*', '+@all', '-eval', '-evalsha')
    const limited = await adapter.connect(server.url.replace('redis://', `redis://${user}:pw@`))
    try {
      for (const call of [() => fencedSet(limited.raw, 'acl', 'v', 5), () => claimFence(limited.raw, 'acl', 5), () => fencedSet(limited.raw, 'acl', 'v', 6)]) {
        const err = await call().catch((e: unknown) => e)
        expect(err).toBeInstanceOf(RedisError)
        expect((err as Error).message).toMatch(/NOPERM/)
        expect((err as Error).message).toMatch(/\+eval/)
        expect(((err as RedisError).cause as Error).message).toMatch(/NOPERM/)
      }
    } finally {
      await limited.disconnect()
      await t.client.command('ACL', 'DELUSER', user)
    }
  })

  it('a paused server: RedisError within the time bound (default 2 s, or `timeout`)', async () => {
    const paused = await startRedis()
    const other = await adapter.connect(paused.url)
    try {
      expect(await fencedSet(other.raw, 'p', 'v', 1)).toBe(true)
      paused.pause()
      // The promise: a call gives up after its `timeout` (300 ms here), saying so; settled within
      // 10x that at most.
      const quick = await settleWithin(fencedSet(other.raw, 'p', 'v', 2, { timeout: 300 }), 3_000)
      expect(quick).not.toBe('pending')
      if (quick === 'pending') return
      expect(quick.error).toBeInstanceOf(RedisError)
      expect((quick.error as Error).message).toMatch(/No reply from Redis within 300 ms/)

      // By default after 2 s (settled within 10x that at most), and not before it: a lower bound.
      const byDefault = await settleWithin(claimFence(other.raw, 'p', 3), 20_000)
      expect(byDefault).not.toBe('pending')
      if (byDefault === 'pending') return
      expect(byDefault.error).toBeInstanceOf(RedisError)
      expect((byDefault.error as Error).message).toMatch(/No reply from Redis within 2,?000 ms/)
      expect(byDefault.elapsed).toBeGreaterThanOrEqual(1_900)
    } finally {
      paused.resume()
      await other.disconnect()
      await paused.stop()
    }
  })

  it('a stopped server: RedisError within the bound; a closed client: ClosedError', async () => {
    const gone = await startRedis()
    const other = await adapter.connect(gone.url)
    try {
      await gone.stop()
      const down = await settleWithin(fencedSet(other.raw, 'g', 'v', 1, { timeout: 500 }), 3_000)
      expect(down).not.toBe('pending')
      if (down === 'pending') return
      expect(down.error).toBeInstanceOf(RedisError)
    } finally {
      await other.disconnect()
    }
    const closing = await adapter.connect(server.url)
    await closing.quit()
    const closed = await claimFence(closing.raw, 'g', 1).catch((e: unknown) => e)
    expect(closed).toBeInstanceOf(ClosedError)
    expect((closed as ClosedError).code).toBe('CLIENT_CLOSED')
  })
})
