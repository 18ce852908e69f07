// Validation messages across the public API, once per client adapter against a real
// redis-server: every value is shown as a reader would write it (never `[object Object]`), the
// redlock habit `acquire(['a', 'b'])` points to acquireAll/withLocks, and a misspelt option name
// in any options object is refused with a suggestion instead of being ignored.
import { describe, expect, it } from 'vitest'
import { claimFence, createLocks, fencedSet, InvalidArgumentError, parseDuration } from '../../src/index.js'
import { adapters } from '../../harness/clients.js'
import { useClient, useRedis } from '../../harness/per-adapter.js'
import { requireRedisOrSkip } from '../../harness/redis-server.js'
import { uniquePrefix } from '../../harness/util.js'

/** The error `call` throws or rejects with (undefined if it succeeds). */
async function errorOf(call: () => unknown): Promise<unknown> {
  try {
    await call()
  } catch (err) {
    return err
  }
  return undefined
}

async function expectInvalid(call: () => unknown, message: RegExp): Promise<string> {
  const err = await errorOf(call)
  expect(err, String(message)).toBeInstanceOf(InvalidArgumentError)
  const text = (err as Error).message
  expect(text, text).toMatch(message)
  expect(text, text).not.toMatch(/\[object /)
  return text
}

describe.skipIf(!requireRedisOrSkip()).each(adapters)('option checks with $name', (adapter) => {
  const server = useRedis()
  const t = useClient(adapter, server, { prefix: 'checks', locks: { ttl: 2_000, wait: 1_000 } })

  it('acquire([a, b]) (the redlock habit) shows the array and points to acquireAll and withLocks', async () => {
    const several = ['a', 'b'] as unknown as string
    for (const call of [() => t.locks.acquire(several), () => t.locks.tryAcquire(several), () => t.locks.withLock(several, () => {})]) {
      await expectInvalid(call, /got \["a","b"\].*acquireAll.*withLocks/)
    }
    expect(await t.client.command('DBSIZE')).toBe(0) // refused before any Redis call
  })

  it('shows every bad value JSON-like and truncated, never as [object Object] or [object Array]', async () => {
    const long = { note: 'x'.repeat(500), more: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] }
    const cases: [() => unknown, RegExp][] = [
      [() => createLocks(5 as never), /options.*got 5/],
      [() => createLocks([t.client.raw] as never), /options.*got \[/],
      [() => t.locks.acquire({ name: 'r' } as never), /resource.*got \{"name":"r"\}/],
      [() => t.locks.acquire('r', { ttl: { ms: 5 } as never }), /ttl.*got \{"ms":5\}/],
      [() => t.locks.acquire('r', { wait: [1_000] as never }), /wait.*got \[1000\]/],
      [() => t.locks.acquire('r', { signal: { aborted: false } as never }), /signal.*got \{"aborted":false\}/],
      [() => t.locks.acquire('r', { signal: new AbortController() as never }), /signal.*got an AbortController/],
      [() => t.locks.acquire('r', { ttl: new Map() as never }), /ttl.*got a Map/],
      [() => t.locks.acquire('r', { ttl: long as never }), /ttl.*got \{"note":"x+…/],
      [() => t.locks.acquireAll('a' as never), /resources.*got "a"/],
      [() => t.locks.acquireAll({ a: 1 } as never), /resources.*got \{"a":1\}/],
      [() => t.locks.close('now' as never), /options.*got "now"/],
      [() => t.locks.semaphore('s', { limit: { n: 2 } as never }), /limit.*got \{"n":2\}/],
      [() => t.locks.semaphore('s', [2] as never), /options.*got \[2\]/],
      [() => fencedSet(t.client.raw, { k: 1 } as never, 'v', 1), /key.*got \{"k":1\}/],
      [() => fencedSet(t.client.raw, 'k', 'v', [1] as never), /fence.*got \[1\]/],
      [() => claimFence(t.client.raw, 'k', 1, { px: { s: 1 } as never }), /px.*got \{"s":1\}/],
      [() => parseDuration({ s: 30 } as never), /got \{"s":30\}|\{"s":30\}/],
    ]
    for (const [call, message] of cases) {
      const text = await expectInvalid(call, message)
      expect(text.length, text).toBeLessThan(400)
    }
  })

  it('refuses a misspelt option of acquire, tryAcquire and withLock, suggesting the right name', async () => {
    await expectInvalid(() => t.locks.acquire('r', { tll: 5_000 } as never), /Unknown option `tll`.*did you mean `ttl`\?/)
    await expectInvalid(() => t.locks.acquire('r', { waitt: 1 } as never), /Unknown option `waitt`.*did you mean `wait`\?/)
    await expectInvalid(() => t.locks.acquire('r', { autoextend: true } as never), /did you mean `autoExtend`\?/)
    await expectInvalid(() => t.locks.tryAcquire('r', { tll: 5_000 } as never), /Unknown option `tll`.*did you mean `ttl`\?/)
    // tryAcquire never waits: a `wait` there is a mistake, not a typo.
    await expectInvalid(() => t.locks.tryAcquire('r', { wait: 1_000 } as never), /Unknown option `wait`.*tryAcquire.*never waits/)
    await expectInvalid(() => t.locks.withLock('r', () => {}, { tll: 5_000 } as never), /did you mean `ttl`\?/)
    // A name nothing is close to lists the options instead.
    await expectInvalid(() => t.locks.acquire('r', { colour: 'red' } as never), /Unknown option `colour`.*ttl, wait, signal, autoExtend/)
    expect(await t.client.command('DBSIZE')).toBe(0)
  })

  it('refuses a misspelt option of acquireAll, withLocks, a semaphore and a read/write lock', async () => {
    await expectInvalid(() => t.locks.acquireAll(['a', 'b'], { tll: 5_000 } as never), /did you mean `ttl`\?/)
    await expectInvalid(() => t.locks.withLocks(['a', 'b'], () => {}, { waitt: 1 } as never), /did you mean `wait`\?/)
    await expectInvalid(() => t.locks.semaphore('s', { limit: 2, limt: 3 } as never), /Unknown option `limt`.*did you mean `limit`\?/)
    await expectInvalid(() => t.locks.semaphore('s', { limt: 3 } as never), /did you mean `limit`\?/)
    const pool = t.locks.semaphore('pool', { limit: 2 })
    await expectInvalid(() => pool.acquire({ tll: 5_000 } as never), /did you mean `ttl`\?/)
    await expectInvalid(() => pool.tryAcquire({ timout: 5 } as never), /did you mean `timeout`\?/)
    await expectInvalid(() => pool.withPermit(() => {}, { waitt: 1 } as never), /did you mean `wait`\?/)
    const rw = t.locks.readWrite('cfg')
    await expectInvalid(() => rw.read({ tll: 5_000 } as never), /did you mean `ttl`\?/)
    await expectInvalid(() => rw.write({ waitt: 1 } as never), /did you mean `wait`\?/)
    await expectInvalid(() => rw.tryRead({ tll: 5_000 } as never), /did you mean `ttl`\?/)
    await expectInvalid(() => rw.tryWrite({ tll: 5_000 } as never), /did you mean `ttl`\?/)
    await expectInvalid(() => rw.withRead(() => {}, { tll: 5_000 } as never), /did you mean `ttl`\?/)
    await expectInvalid(() => rw.withWrite(() => {}, { tll: 5_000 } as never), /did you mean `ttl`\?/)
    expect(await t.client.command('DBSIZE')).toBe(0)
  })

  it('refuses a misspelt option of createLocks (and its quorum and replicas), close, the guards and parseDuration', async () => {
    await expectInvalid(() => createLocks({ redis: t.client.raw, tll: 5_000 } as never), /Unknown option `tll`.*did you mean `ttl`\?/)
    await expectInvalid(() => createLocks({ redis: t.client.raw, reentrnt: true } as never), /did you mean `reentrant`\?/)
    await expectInvalid(() => createLocks({ redis: t.client.raw, prefx: 'a:' } as never), /did you mean `prefix`\?/)
    await expectInvalid(
      () => createLocks({ redis: t.client.raw, replicas: { count: 1, timout: 100 } } as never),
      /Unknown option `timout`.*did you mean `timeout`\?/,
    )
    await expectInvalid(() => createLocks({ redis: [t.client.raw], quorum: { nodetimeout: 100 } } as never), /did you mean `nodeTimeout`\?/)
    await expectInvalid(() => createLocks({ client: t.client.raw } as never), /Unknown option `client`/)
    await expectInvalid(() => t.locks.close({ relase: true } as never), /Unknown option `relase`.*did you mean `release`\?/)
    await expectInvalid(() => fencedSet(t.client.raw, 'k', 'v', 1, { PX: 100 } as never), /Unknown option `PX`.*did you mean `px`\?/)
    await expectInvalid(() => claimFence(t.client.raw, 'k', 1, { timeot: 100 } as never), /did you mean `timeout`\?/)
    await expectInvalid(() => parseDuration('5s', { infinite: true } as never), /Unknown option `infinite`.*did you mean `infinity`\?/)
    expect(await t.client.command('DBSIZE')).toBe(0)
    expect(t.locks.closed).toBe(false) // the refused close() closed nothing
  })

  it('refuses a holder label that is not 1 to 64 printable characters, naming the value', async () => {
    const bad: [unknown, RegExp][] = [
      ['', /got ""/],
      ['x'.repeat(65), /got "x{20,}/],
      ['pod\n7', /got "pod\\n7"/],
      ['bell\u0007', /got "bell\\u0007"/],
      ['\u0085next', /got ".next" \(U\+0085 at index 0\)/],
      [42, /got 42/],
      [null, /got null/],
      [['a'], /got \["a"\]/],
    ]
    for (const [holder, shown] of bad) {
      const text = await expectInvalid(
        () => createLocks({ redis: t.client.raw, holder } as never),
        /Expected `holder` to be a label of 1 to 64 printable characters/,
      )
      expect(text, text).toMatch(shown)
    }
    // Not well-formed UTF-16: refused as every string sent to Redis is.
    await expectInvalid(() => createLocks({ redis: t.client.raw, holder: 'a\ud800' }), /`holder` to be well-formed UTF-16/)
    // 64 characters (code points, not UTF-16 units), spaces and any script are fine.
    for (const holder of ['x'.repeat(64), '\u{1F512}'.repeat(64), 'billing worker 7 / zone b', 'hôte-ß:42']) {
      await createLocks({ redis: t.client.raw, holder, prefix: uniquePrefix('holder') }).close()
    }
    expect(await t.client.command('DBSIZE')).toBe(0)
  })

  it('still accepts every documented option', async () => {
    const signal = new AbortController().signal
    const lease = await t.locks.acquire('ok', { ttl: 1_000, wait: 100, signal, autoExtend: false })
    await lease.release()
    const tried = await t.locks.tryAcquire('ok', { ttl: 1_000, autoExtend: false, timeout: 500 })
    await tried?.release()
    const other = createLocks({
      redis: t.client.raw,
      prefix: uniquePrefix('ok'),
      holder: 'checks:1',
      ttl: 1_000,
      wait: 100,
      driftFactor: 0.01,
      fenceRetention: 60_000,
      waiterGrace: 200,
      maxTtl: 5_000,
      allowShortTtl: false,
      reentrant: false,
      tryTimeout: 500,
    })
    await other.close({ release: true })
    expect(await fencedSet(t.client.raw, 'okk', 'v', 1, { px: 1_000, timeout: 500 })).toBe(true)
    expect(parseDuration('inf', { name: 'wait', infinity: true, positive: true })).toBe(Infinity)
  })
})
