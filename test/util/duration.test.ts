// Units: one duration parser for the library and the CLI, and a ttl floor that catches seconds
// written where milliseconds are meant.
import { describe, expect, it } from 'vitest'
import { createLocks, InvalidArgumentError, parseDuration } from '../../src/index.js'
import { adapters } from '../../harness/clients.js'
import { useClient, useRedis } from '../../harness/per-adapter.js'
import { requireRedisOrSkip } from '../../harness/redis-server.js'

describe('parseDuration', () => {
  it.each<[string, number]>([
    ['250ms', 250],
    ['1.5s', 1_500],
    ['30s', 30_000],
    ['1m30s', 90_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['2d', 172_800_000],
    ['1d2h3m4s5ms', 93_784_005],
    ['1.1s', 1_100],
    ['0.25s', 250],
    ['1.5h', 5_400_000],
    ['0', 0],
    ['0s', 0],
    ['007s', 7_000],
  ])('reads %j as %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms)
  })

  it.each<[string, RegExp]>([
    ['30', /Invalid duration "30": a number needs a unit: 30s for seconds, 30ms for milliseconds/],
    ['1.5', /a number needs a unit: 1\.5s/],
    ['1m30', /30 has no unit/],
    ['30s1m', /largest to smallest/],
    ['1s1s', /largest to smallest/],
    ['1.5ms', /1\.5ms is not a whole number of milliseconds/],
    ['0.0001s', /not a whole number/],
    ['-5s', /cannot be negative/],
    ['5S', /lower case/],
    ['1H', /lower case/],
    ['', /expected a duration such as/],
    ['soon', /expected a duration such as/],
    ['5 s', /expected a duration/],
    [' 5s', /expected a duration/],
    ['5sec', /expected a duration/],
    ['1e3ms', /expected a duration/],
    ['Infinity', /expected a finite duration/],
    ['99999999999d', /too long/],
  ])('refuses %j', (text, message) => {
    expect(() => parseDuration(text)).toThrow(InvalidArgumentError)
    expect(() => parseDuration(text)).toThrow(message)
  })

  it('names the value as asked, reads Infinity where allowed, and refuses 0 where a positive duration is needed', () => {
    expect(() => parseDuration('30', { name: '--ttl value' })).toThrow(/^Invalid --ttl value "30": a number needs a unit/)
    expect(parseDuration('Infinity', { infinity: true })).toBe(Infinity)
    expect(parseDuration('inf', { infinity: true })).toBe(Infinity)
    expect(() => parseDuration('0', { positive: true })).toThrow(/longer than 0/)
    expect(() => parseDuration('0ms', { positive: true })).toThrow(/longer than 0/)
    expect(() => parseDuration(30 as unknown as string)).toThrow(InvalidArgumentError)
  })
})

describe.skipIf(!requireRedisOrSkip()).each(adapters)('ttl floor with $name', (adapter) => {
  const server = useRedis()
  const t = useClient(adapter, server, { prefix: 'floor' })

  it('a ttl below 100 ms is refused with a message about the unit, everywhere a lease ttl is given', async () => {
    const unitHint =
      /`ttl` to be at least 100 ms, got 30: durations are in milliseconds \(for 30 seconds write 30000, or parseDuration\('30s'\)\).*allowShortTtl: true/
    expect(() => createLocks({ redis: t.client.raw, ttl: 30 })).toThrow(unitHint)
    expect(() => createLocks({ redis: t.client.raw, maxTtl: 30 })).toThrow(/`maxTtl` to be at least 100 ms/)
    for (const call of [
      () => t.locks.acquire('floor', { ttl: 30 }),
      () => t.locks.tryAcquire('floor', { ttl: 30 }),
      () => t.locks.withLock('floor', () => {}, { ttl: 30 }),
      () => t.locks.extend('floor', 'some-token', 30),
    ]) {
      const err = await call().catch((e: unknown) => e)
      expect(err).toBeInstanceOf(InvalidArgumentError)
      expect((err as Error).message).toMatch(unitHint)
    }
    // At the floor: fine. A lease's own extend has the same floor.
    const lease = await t.locks.acquire('floor', { ttl: 100 })
    const extendErr = await lease.extend(30).catch((e: unknown) => e)
    expect(extendErr).toBeInstanceOf(InvalidArgumentError)
    expect((extendErr as Error).message).toMatch(unitHint)
    await lease.release()
  })

  it('allowShortTtl: true lets a short ttl through (for tests and tight loops on purpose)', async () => {
    expect(() => createLocks({ redis: t.client.raw, ttl: 30, allowShortTtl: 'yes' as unknown as boolean })).toThrow(/`allowShortTtl`.*got "yes"/)
    // Below the 100 ms floor, but not so short that a loaded machine's reply outlives the lease's
    // validity (an 18 ms reply limit for a 20 ms lease failed a clean-checkout run under a busy loop).
    const short = createLocks({ redis: t.client.raw, ttl: 99, allowShortTtl: true })
    try {
      const lease = await short.acquire('short', { ttl: 99 })
      expect(lease.ttl).toBe(99)
      await lease.release()
      expect(await short.tryAcquire('short', { ttl: 90 })).not.toBeNull()
    } finally {
      await short.close()
    }
  })

  it('a duration string where ms are expected is refused with a pointer to parseDuration', async () => {
    const err = await t.locks.acquire('floor', { ttl: '30s' as unknown as number }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(InvalidArgumentError)
    expect((err as Error).message).toMatch(/got "30s"; for a duration string use parseDuration\("30s"\)/)
    const lease = await t.locks.acquire('floor', { ttl: parseDuration('1.5s') })
    expect(lease.ttl).toBe(1_500)
    await lease.release()
  })
})
