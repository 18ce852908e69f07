// Hostile input, as properties (fast-check), once per client adapter against a real redis-server:
// resource names, tokens, ttls, waits and option objects of any shape, and random interleavings
// of acquire / extend / release / abort / close across two instances. Every outcome is a value or
// a typed FencelockError (an invalid value: InvalidArgumentError naming it); nothing crashes or
// rejects unhandled; no timer or socket outlives close(); no key is written outside the prefix.
//
// A failure prints fast-check's seed and path; replay it with FC_SEED=<seed> FC_PATH=<path>.
import fc from 'fast-check'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { parseCommandLine, UsageError } from '../../src/cli/args.js'
import { MAX_RESOURCE_LENGTH, MAX_TOKEN_LENGTH, MAX_TTL, MIN_TTL } from '../../src/util/validate.js'
import {
  claimFence,
  ClosedError,
  createLocks,
  fencedSet,
  FencelockError,
  InvalidArgumentError,
  LockAbortedError,
  parseDuration,
  type Lease,
  type Locks,
} from '../../src/index.js'
import { adapters, type TestClient } from '../../harness/clients.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { sleep, until } from '../../harness/until.js'

const seed = process.env.FC_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FC_SEED)
const replay = process.env.FC_PATH === undefined ? {} : { path: process.env.FC_PATH }
const runs: Record<string, number> = {}
/** fast-check parameters: a shared seed (printed), and a run counter per property for the summary. */
const params = (numRuns: number) => ({ numRuns, seed, ...replay })
const count = (label: string) => void (runs[label] = (runs[label] ?? 0) + 1)

/** Every key in this suite's Redis starts with this. */
const ROOT = 'pt:'
let unique = 0
const prefixFor = (what: string) => `${ROOT}${what}:${++unique}:`

/** The oracle for "well-formed": UTF-8 round trip, independent of the library's regular expression. */
const wellFormed = (s: string) => Buffer.from(s, 'utf8').toString('utf8') === s
const validName = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_RESOURCE_LENGTH && wellFormed(v)
const validToken = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_TOKEN_LENGTH && wellFormed(v)
const validTtl = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= MIN_TTL && v <= MAX_TTL
const validWait = (v: unknown) => v === Infinity || (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_TTL)

/** `err` is an InvalidArgumentError whose message names one of `names` (as `name`, or one element of it: `name[2]`). */
function expectNamed(err: unknown, ...names: string[]): void {
  expect(err).toBeInstanceOf(InvalidArgumentError)
  const message = (err as Error).message
  const named = (n: string) => message.includes(`\`${n}\``) || new RegExp(`\`${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\[\\d+\\]\``).test(message)
  expect(names.some(named), `${message} should name one of ${names.join(', ')}`).toBe(true)
}

const outcome = <T>(p: Promise<T>): Promise<{ ok: T } | { err: unknown }> =>
  p.then(
    (ok) => ({ ok }),
    (err: unknown) => ({ err }),
  )

// ------------------------------------------------------------------ arbitraries

/** One UTF-16 code unit, any of them: lone surrogates included. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c))
const tricky = [
  '{',
  '}',
  '{}',
  'a}b',
  '{a}',
  '}:L',
  ':F',
  '\0',
  'a\0b',
  ' ',
  '\n',
  '*',
  '?',
  '[a]',
  '\\',
  'a\uD800',
  'a\uDC00',
  'a\uFFFD',
  '\uD800',
  '\uDFFF\uD800',
  '\uD83D\uDE00',
  'a\uD83D', // lone surrogates and a pair
  'a',
  'а',
  'ａ',
  'A\u030A',
  '\u00C5',
  '\u212B',
  'ß',
  'ss',
  'ﬁ',
  'fi', // lookalikes: must stay distinct
]
const names = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 24 }),
  fc.string({ unit: codeUnit, maxLength: 12 }),
  fc.constantFrom(...tricky),
  fc.tuple(fc.constantFrom(...tricky), fc.string({ unit: 'grapheme', maxLength: 6 })).map(([a, b]) => a + b),
  fc.integer({ min: MAX_RESOURCE_LENGTH - 2, max: MAX_RESOURCE_LENGTH + 2 }).map((n) => 'x'.repeat(n)),
  fc.constant('\uD83D\uDE00'.repeat(MAX_RESOURCE_LENGTH / 2)),
)
const notStrings = fc.oneof(fc.integer(), fc.constantFrom(null, undefined, true, NaN), fc.anything({ maxDepth: 1 }))

/** Numbers and near-numbers a caller could pass where milliseconds are expected. */
/** Any generated value as text: String() throws on objects such as { toString: '' }. */
const safe = (value: unknown): string => {
  try {
    return typeof value === 'bigint' ? `${value}n` : String(value)
  } catch {
    return Object.prototype.toString.call(value)
  }
}

const durations = fc.oneof(
  fc.integer({ min: -5, max: 3_000 }),
  fc.constantFrom(0, -0, 1, 30, 99, 100, 1.5, NaN, Infinity, -Infinity, MAX_TTL, MAX_TTL + 1, 2 ** 53, '30s', '1000', null, undefined),
  fc.double({ noNaN: false }),
  fc.bigInt({ min: -5n, max: 5_000n }),
  fc.anything({ maxDepth: 1 }),
)

// ------------------------------------------------------------------ pure properties

afterAll(() => console.log(`[properties] runs: ${JSON.stringify(runs)} (seed ${seed})`))

describe('properties without Redis', () => {
  it('parseDuration: any string gives whole ms or InvalidArgumentError; composed durations add up exactly', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 12 }), fc.stringMatching(/^[0-9.]{1,6}(ms|s|m|h|d|S|M)?([0-9.]{1,4}(ms|s|m))?$/)), (text) => {
        count('duration strings')
        try {
          const ms = parseDuration(text)
          expect(Number.isSafeInteger(ms) && ms >= 0).toBe(true)
        } catch (err) {
          expect(err).toBeInstanceOf(InvalidArgumentError)
          expect((err as Error).message).toContain(JSON.stringify(text))
        }
      }),
      params(2_000),
    )
    const units = [
      ['d', 86_400_000],
      ['h', 3_600_000],
      ['m', 60_000],
      ['s', 1_000],
      ['ms', 1],
    ] as const
    fc.assert(
      fc.property(fc.array(fc.option(fc.integer({ min: 0, max: 999 }), { nil: undefined }), { minLength: 5, maxLength: 5 }), (amounts) => {
        count('duration sums')
        const parts = units.flatMap(([unit, ms], i) => (amounts[i] === undefined ? [] : [{ text: `${amounts[i]}${unit}`, ms: amounts[i]! * ms }]))
        fc.pre(parts.length > 0)
        expect(parseDuration(parts.map((p) => p.text).join(''))).toBe(parts.reduce((sum, p) => sum + p.ms, 0))
      }),
      params(500),
    )
  })

  it('the CLI: any --ttl / --wait text is a command with whole ms or a UsageError naming the flag; never a bare number', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('--ttl', '--wait'),
        fc.oneof(fc.string({ maxLength: 10 }), fc.integer({ min: 1, max: 10 ** 6 }).map(String)),
        (flag, text) => {
          count('cli flags')
          try {
            const command = parseCommandLine(['acquire', 'job', `${flag}=${text}`], {}) as { ttl?: number; wait?: number }
            const ms = flag === '--ttl' ? command.ttl : command.wait
            expect(ms === Infinity || (Number.isSafeInteger(ms) && ms! >= 0)).toBe(true)
            expect(/^[1-9]\d*$/.test(text)).toBe(false) // a bare number is never read as ms
          } catch (err) {
            expect(err).toBeInstanceOf(UsageError)
            expect((err as Error).message).toContain(flag)
          }
        },
      ),
      params(1_000),
    )
  })
})

// ------------------------------------------------------------------ properties against Redis

describe.skipIf(!requireRedisOrSkip()).each(adapters)('properties with $name', (adapter) => {
  let server: RedisProcess
  let clients: [TestClient, TestClient]
  /** A client of the other library: every other interleaving pairs the two libraries. */
  let other: TestClient
  let control: TestClient
  let locks: [Locks, Locks]
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => void unhandled.push(reason)

  beforeAll(async () => {
    server = await startRedis()
    clients = [await adapter.connect(server.url), await adapter.connect(server.url)]
    control = await adapter.connect(server.url)
    other = await adapters.find((a) => a.name !== adapter.name)!.connect(server.url)
    process.on('unhandledRejection', onUnhandled)
  })
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled)
    for (const c of [...(clients ?? []), control, other]) await c?.quit()
    await server?.stop()
  })
  beforeEach(() => {
    const prefix = prefixFor(adapter.name)
    locks = [createLocks({ redis: clients[0].raw, prefix }), createLocks({ redis: clients[1].raw, prefix })]
  })
  afterEach(async () => {
    for (const l of locks) await l.close()
    expect(unhandled).toEqual([])
    expect(await keysOutsideRoot()).toEqual([])
  })

  /** Every key in Redis that is not under this suite's prefixes (SCAN). */
  async function keysOutsideRoot(): Promise<string[]> {
    const keys: string[] = []
    let cursor = '0'
    do {
      const [next, batch] = (await control.command('SCAN', cursor, 'COUNT', 1000)) as [string, string[]]
      cursor = String(next)
      keys.push(...batch.map(String))
    } while (cursor !== '0')
    // (A guard key is the caller's key with a hash tag: `{key}:fence`.)
    return keys.filter((k) => !k.startsWith(ROOT) && !k.startsWith(`{${ROOT}`))
  }

  it('resource names: a valid one locks exactly its own keys, any other is InvalidArgumentError naming `resource`', async () => {
    const [a] = locks
    await fc.assert(
      fc.asyncProperty(fc.oneof(names, notStrings), async (name) => {
        count(`names (${adapter.name})`)
        const result = await outcome(a.tryAcquire(name as string, { ttl: 5_000 }))
        if (!validName(name)) {
          expect('err' in result, `accepted invalid name ${JSON.stringify(name)}`).toBe(true)
          if ('err' in result) expectNamed(result.err, 'resource')
          return
        }
        expect('ok' in result, `refused valid name ${JSON.stringify(name)}: ${'err' in result ? String(result.err) : ''}`).toBe(true)
        const lease = (result as { ok: Lease | null }).ok
        expect(lease).not.toBeNull()
        const info = await a.inspect(name)
        expect(info).toMatchObject({ resource: name, held: true, token: lease!.token, fence: lease!.fence })
        expect(await lease!.release()).toBe(true)
      }),
      params(300),
    )
  })

  it('distinct valid names never share a lock or a fence (lone surrogates, lookalikes, braces)', async () => {
    const [a, b] = locks
    await fc.assert(
      fc.asyncProperty(names.filter(validName), names.filter(validName), async (x, y) => {
        fc.pre(x !== y)
        count(`name pairs (${adapter.name})`)
        const first = await a.tryAcquire(x, { ttl: 5_000 })
        const second = await b.tryAcquire(y, { ttl: 5_000 })
        try {
          expect(first, `${JSON.stringify(x)} was not free`).not.toBeNull()
          expect(second, `${JSON.stringify(y)} shares a lock with ${JSON.stringify(x)}`).not.toBeNull()
        } finally {
          await first?.release()
          await second?.release()
        }
      }),
      params(100),
    )
    // The three names of the issue, explicitly: only the well-formed one is a name.
    for (const bad of ['a\uD800', 'a\uDC00']) expectNamed(await a.acquire(bad).catch((e: unknown) => e), 'resource')
    const good = await a.acquire('a\uFFFD')
    await good.release()
  })

  it('tokens: release/extend by any token resolve false or are InvalidArgumentError naming `token`', async () => {
    const [a, b] = locks
    const held = await a.acquire('token-target', { ttl: 10_000 })
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(names, notStrings, fc.string({ minLength: 250, maxLength: 260 }), fc.constant(`${held.token}\uD800`)),
        fc.boolean(),
        async (token, viaExtend) => {
          count(`tokens (${adapter.name})`)
          fc.pre(token !== held.token)
          const result = await outcome(viaExtend ? b.extend('token-target', token as string, 1_000) : b.release('token-target', token as string))
          if (validToken(token)) expect(result).toEqual({ ok: false })
          else expectNamed((result as { err: unknown }).err, 'token')
        },
      ),
      params(100),
    )
    // Nobody's guess touched the real holder.
    expect(held.held).toBe(true)
    expect(await a.inspect('token-target')).toMatchObject({ held: true, token: held.token })
    await held.release()
  })

  it('ttl and wait of acquire / tryAcquire / extend: any value is a lease or InvalidArgumentError naming it', async () => {
    const [a] = locks
    await fc.assert(
      fc.asyncProperty(durations, durations, fc.constantFrom('acquire', 'tryAcquire', 'extend'), async (ttl, wait, call) => {
        count(`ttl/wait (${adapter.name})`)
        const resource = `tw:${++unique}`
        const options = { ttl: ttl as number, wait: wait as number }
        if (call === 'extend') {
          const result = await outcome(a.extend(resource, 'no-such-token', ttl as number))
          if (ttl === undefined || validTtl(ttl)) expect(result).toEqual({ ok: false })
          else expectNamed((result as { err: unknown }).err, 'ttl')
          return
        }
        const result = await outcome(call === 'acquire' ? a.acquire(resource, options) : a.tryAcquire(resource, { ttl: ttl as number }))
        const ttlOk = ttl === undefined || validTtl(ttl)
        const waitOk = call === 'tryAcquire' || wait === undefined || validWait(wait)
        if (ttlOk && waitOk) {
          // The resource is free, but a wait of a few ms may run out before Redis' first reply:
          // that is a typed timeout, not a refusal of the value.
          if (
            'err' in result &&
            typeof wait === 'number' &&
            wait < 100 &&
            result.err instanceof FencelockError &&
            !(result.err instanceof InvalidArgumentError)
          )
            return
          expect('ok' in result, `refused ttl ${safe(ttl)} wait ${safe(wait)}: ${'err' in result ? String(result.err) : ''}`).toBe(true)
          const lease = (result as { ok: Lease }).ok
          expect(lease.ttl).toBe(ttl ?? 10_000)
          await lease.release()
        } else {
          expect('err' in result, `accepted ttl ${safe(ttl)} wait ${safe(wait)}`).toBe(true)
          expectNamed((result as { err: unknown }).err, ...(ttlOk ? ['wait'] : ['ttl']))
        }
      }),
      params(150),
    )
  })

  it('acquire option objects with extra or wrong-typed fields: a lease, or InvalidArgumentError naming a field', async () => {
    const [a] = locks
    const fields = fc.constantFrom('ttl', 'wait', 'signal', 'autoExtend', 'extra', 'ttlMs', 'timeout')
    const values = fc.oneof(durations, fc.boolean(), fc.constant(new AbortController().signal), fc.constant(AbortSignal.abort()), fc.string({ maxLength: 4 }))
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fields, values, { maxKeys: 4 }), async (options) => {
        count(`acquire options (${adapter.name})`)
        const resource = `opt:${++unique}`
        const result = await outcome(a.acquire(resource, options as never))
        if ('ok' in result) {
          await result.ok.release()
          return
        }
        const { err } = result
        if (err instanceof FencelockError && err.code === 'LOCK_ABORTED') {
          expect(options.signal).toBeInstanceOf(AbortSignal)
          return
        }
        expectNamed(err, ...Object.keys(options))
      }),
      params(100),
    )
  })

  // Known bug, reported, not fixed here (src/api/locks.ts acquire path belongs to another change):
  // acquire(resource, null) rejects with a raw TypeError ("Cannot read properties of null"), and
  // acquire(resource, 5) or ('30s') silently uses the defaults. Counterexample: options = null.
  // Enable once acquire checks its options argument (validate.ts has checkOptions for it).
  it('acquire / tryAcquire / withLock with a non-object options argument: InvalidArgumentError naming `options`', async () => {
    const [a] = locks
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(null, 5, '30s', true), fc.constantFrom('acquire', 'tryAcquire', 'withLock'), async (options, call) => {
        count(`non-object options (${adapter.name})`)
        const resource = `nonobj:${++unique}`
        const result = await outcome<unknown>(
          call === 'acquire'
            ? a.acquire(resource, options as never)
            : call === 'tryAcquire'
              ? a.tryAcquire(resource, options as never)
              : a.withLock(resource, () => 1, options as never),
        )
        if ('ok' in result && result.ok instanceof Object && 'release' in result.ok) await (result.ok as Lease).release()
        expect('err' in result).toBe(true)
        expectNamed((result as { err: unknown }).err, 'options')
      }),
      params(20),
    )
  })

  it('createLocks option objects with extra or wrong-typed fields: an instance that works, or InvalidArgumentError naming a field', async () => {
    const fields = fc.constantFrom(
      'prefix',
      'ttl',
      'wait',
      'driftFactor',
      'fenceRetention',
      'waiterGrace',
      'maxTtl',
      'allowShortTtl',
      'quorum',
      'extra',
      'redis',
    )
    const values = fc.oneof(
      durations,
      fc.boolean(),
      fc.string({ maxLength: 4 }).map((s) => ROOT + s),
      fc.constantFrom('a\uD800', { nodeTimeout: 'x' }, {}, [], 0.2),
    )
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fields, values, { maxKeys: 4 }), async (extra) => {
        count(`createLocks options (${adapter.name})`)
        const options = { redis: clients[0].raw, ...extra, prefix: prefixFor('opts') + (typeof extra.prefix === 'string' ? extra.prefix : '') }
        if (extra.prefix !== undefined && typeof extra.prefix !== 'string') options.prefix = extra.prefix as string
        let instance: Locks
        try {
          instance = createLocks(options as never)
        } catch (err) {
          expectNamed(err, ...Object.keys(extra), ...Object.keys(extra).map((k) => `${k}.nodeTimeout`), 'options')
          return
        }
        try {
          const result = await outcome(instance.tryAcquire(`co:${++unique}`))
          if ('err' in result) expect(result.err).toBeInstanceOf(FencelockError)
          else await result.ok?.release()
        } finally {
          await instance.close()
        }
      }),
      params(100),
    )
  })

  it('fencedSet / claimFence: any key, value, fence and options: a boolean or InvalidArgumentError naming the argument', async () => {
    const raw = clients[0].raw
    await fc.assert(
      fc.asyncProperty(
        // Keys under ROOT (the SCAN check after each test), and non-strings.
        fc.oneof(
          names.map((n) => `${ROOT}fs:${n}`),
          notStrings.filter((v) => typeof v !== 'string'),
          fc.constant(''),
        ),
        fc.oneof(fc.string({ unit: codeUnit, maxLength: 8 }), notStrings),
        fc.oneof(fc.integer({ min: -2, max: 2 ** 40 }), durations),
        fc.oneof(fc.constant(undefined), fc.dictionary(fc.constantFrom('px', 'timeout', 'extra'), durations, { maxKeys: 3 }), notStrings),
        fc.boolean(),
        async (key, value, fence, options, claim) => {
          count(`guards (${adapter.name})`)
          const result = await outcome(
            claim
              ? claimFence(raw, key as string, fence as number, options as never)
              : fencedSet(raw, key as string, value as string, fence as number, options as never),
          )
          if ('ok' in result) {
            expect(typeof result.ok).toBe('boolean')
            return
          }
          // A valid but tiny `timeout` may pass before the reply: that is a RedisError, as documented.
          if (result.err instanceof FencelockError && result.err.code === 'REDIS_ERROR' && /No reply from Redis within \d+ ms/.test(result.err.message)) return
          // An unknown key of the options (`extra`, or any key of an object passed as options) is
          // refused by its name, with the known ones listed (issue 18 item 7).
          if (result.err instanceof InvalidArgumentError && /^Unknown option `.*` in the fencedSet\/claimFence options/s.test(result.err.message)) return
          expectNamed(result.err, 'key', 'value', 'fence', 'px', 'timeout', 'options')
        },
      ),
      params(150),
    )
  })

  /** Random interleavings across two instances; no socket or timer of fencelock's outlives close(). */
  const interleavings = async (numRuns: number) => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('acquire' as const),
        inst: fc.integer({ min: 0, max: 1 }),
        res: fc.integer({ min: 0, max: 2 }),
        ttl: fc.integer({ min: 100, max: 600 }),
        wait: fc.constantFrom(0, 50, 300, 600),
        abortable: fc.boolean(),
        autoExtend: fc.boolean(),
      }),
      fc.record({
        kind: fc.constant('tryAcquire' as const),
        inst: fc.integer({ min: 0, max: 1 }),
        res: fc.integer({ min: 0, max: 2 }),
        ttl: fc.integer({ min: 100, max: 600 }),
      }),
      fc.record({
        kind: fc.constant('withLock' as const),
        inst: fc.integer({ min: 0, max: 1 }),
        res: fc.integer({ min: 0, max: 2 }),
        hold: fc.integer({ min: 0, max: 200 }),
        wait: fc.constantFrom(0, 300, 600),
      }),
      fc.record({ kind: fc.constant('extend' as const), lease: fc.nat(), ttl: fc.integer({ min: 100, max: 600 }) }),
      fc.record({ kind: fc.constant('release' as const), lease: fc.nat(), byToken: fc.option(fc.integer({ min: 0, max: 1 }), { nil: undefined }) }),
      fc.record({ kind: fc.constant('abort' as const), which: fc.nat() }),
      fc.record({ kind: fc.constant('close' as const), inst: fc.integer({ min: 0, max: 1 }) }),
      fc.record({ kind: fc.constant('sleep' as const), ms: fc.integer({ min: 0, max: 150 }) }),
    )
    const baseline = resourceCounts()
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(op, fc.boolean()), { minLength: 1, maxLength: 20 }), async (script) => {
        const mixed = (runs[`interleavings (${adapter.name})`] ?? 0) % 2 === 1
        count(`interleavings (${adapter.name})`)
        if (mixed) count(`interleavings with ${adapter.name} + ${other.adapter}`)
        // A clean start, so that a shrinking run is not blamed for what an earlier run left.
        await settlesTo(baseline, 6_000)
        const prefix = prefixFor('mix')
        const second = mixed ? other : clients[1]
        const pair = [createLocks({ redis: clients[0].raw, prefix }), createLocks({ redis: second.raw, prefix })] as const
        const leases: Lease[] = []
        const letGo = new Set<Lease>() // release called: the holder is done with it
        const fences = new Map<string, Set<number>>()
        const aborts: AbortController[] = []
        const inFlight: Promise<unknown>[] = []
        const problems: string[] = []
        const resource = (r: number) => `mix:${r}`

        // A lease just granted: no other lease of that resource may still believe it holds it.
        const granted = (lease: Lease) => {
          for (const other of leases) {
            if (other !== lease && other.resource === lease.resource && other.held && !letGo.has(other)) {
              problems.push(`two leases hold ${lease.resource}: fences ${other.fence} (remaining ${other.remaining.toFixed(1)} ms) and ${lease.fence}`)
            }
          }
          const seen = fences.get(lease.resource) ?? new Set<number>()
          if (seen.has(lease.fence)) problems.push(`fence ${lease.fence} of ${lease.resource} handed out twice`)
          seen.add(lease.fence)
          fences.set(lease.resource, seen)
          leases.push(lease)
        }
        // Every failure is typed; a closed instance says so.
        const typed = (what: string) => (err: unknown) => {
          if (!(err instanceof FencelockError)) problems.push(`${what}: untyped ${String(err)}`)
          if (err instanceof InvalidArgumentError) problems.push(`${what}: ${err.message}`)
        }

        const run = (step: (typeof script)[number][0]): Promise<unknown> => {
          switch (step.kind) {
            case 'acquire': {
              const controller = step.abortable ? new AbortController() : undefined
              if (controller) aborts.push(controller)
              const options = { ttl: step.ttl, wait: step.wait, autoExtend: step.autoExtend, ...(controller && { signal: controller.signal }) }
              return pair[step.inst]!.acquire(resource(step.res), options).then(granted, (err: unknown) => {
                typed('acquire')(err)
                if (err instanceof LockAbortedError && !controller?.signal.aborted) problems.push('LockAbortedError without an abort')
              })
            }
            case 'tryAcquire':
              return pair[step.inst]!.tryAcquire(resource(step.res), { ttl: step.ttl }).then((lease) => lease && granted(lease), typed('tryAcquire'))
            case 'withLock':
              return pair[step.inst]!.withLock(
                resource(step.res),
                async (lease) => {
                  granted(lease)
                  await sleep(step.hold)
                  letGo.add(lease)
                },
                { ttl: 300, wait: step.wait },
              ).catch(typed('withLock'))
            case 'extend': {
              const lease = leases[step.lease % Math.max(1, leases.length)]
              return lease ? lease.extend(step.ttl).catch(typed('extend')) : Promise.resolve()
            }
            case 'release': {
              const lease = leases[step.lease % Math.max(1, leases.length)]
              if (!lease) return Promise.resolve()
              letGo.add(lease)
              if (step.byToken === undefined) return lease.release().catch(typed('release'))
              return pair[step.byToken]!.release(lease.resource, lease.token).catch(typed('release by token'))
            }
            case 'abort':
              aborts[step.which % Math.max(1, aborts.length)]?.abort(new Error('test abort'))
              return Promise.resolve()
            case 'close':
              return pair[step.inst]!.close().catch(typed('close'))
            case 'sleep':
              return sleep(step.ms)
          }
        }

        try {
          for (const [step, awaited] of script) {
            const done = run(step)
            if (awaited) await done
            else inFlight.push(done)
          }
          // Everything settles, bounded: waits are at most 1 s, holds 200 ms.
          let timer: NodeJS.Timeout | undefined
          const settled = await Promise.race([
            Promise.all(inFlight).then(() => true),
            new Promise<false>((resolve) => (timer = setTimeout(resolve, 8_000, false))),
          ])
          clearTimeout(timer)
          if (!settled) problems.push('an operation did not settle within 8 s')
        } finally {
          await Promise.all(pair.map((l) => l.close()))
        }
        // After close: every operation is refused as closed, and nothing of fencelock's lingers.
        const afterClose = await pair[0].acquire('mix:0').catch((e: unknown) => e)
        if (!(afterClose instanceof ClosedError)) problems.push(`acquire after close: ${String(afterClose)}`)
        // close() ends fencelock's pub/sub connection at once (also one still being opened).
        const lingering = await settlesTo(baseline, 1_000)
        if (lingering) problems.push(`active resources after close: ${lingering}`)
        const outside = await keysOutsideRoot()
        if (outside.length > 0) problems.push(`keys outside the prefix: ${JSON.stringify(outside)}`)
        expect(problems).toEqual([])
        expect(unhandled).toEqual([])
      }),
      params(numRuns),
    )
  }

  it('random interleavings of acquire / tryAcquire / withLock / extend / release / abort / close across two instances', () => interleavings(50), 90_000)

  // The same, 300 runs (about 40 s per adapter): FENCELOCK_LONG_TESTS=1 npm test.
  it.runIf(process.env.FENCELOCK_LONG_TESTS === '1')('random interleavings, 300 runs', () => interleavings(300), 600_000)
})

describe.skipIf(!requireRedisOrSkip()).each(adapters)('close() with $name', (adapter) => {
  // Found by the interleavings property (seed 983002228, path "0"): a waiter still on its first
  // attempt when close() was called subscribed afterwards, and the socket lingered ~4 s.
  it('leaves no socket or timer of fencelock open once close() resolved, with a waiter in flight', async () => {
    const server = await startRedis()
    const [c0, c1] = [await adapter.connect(server.url), await adapter.connect(server.url)]
    try {
      const baseline = resourceCounts()
      const a = createLocks({ redis: c0.raw, prefix: `${ROOT}close:` })
      const b = createLocks({ redis: c1.raw, prefix: `${ROOT}close:` })
      await b.acquire('r', { ttl: 440 })
      await b.close()
      const waiting = a.withLock('r', () => {}, { ttl: 300, wait: 300 }).catch((e: unknown) => e)
      await a.close()
      expect(await waiting).toBeInstanceOf(ClosedError)
      expect(await settlesTo(baseline, 500)).toBeUndefined()
    } finally {
      await c0.quit()
      await c1.quit()
      await server.stop()
    }
  })
})

/** Counts of timers and sockets now (process.getActiveResourcesInfo). */
function resourceCounts(): Map<string, number> {
  const counts = new Map<string, number>()
  for (const kind of process.getActiveResourcesInfo()) if (kind === 'Timeout' || kind === 'TCPSocketWrap') counts.set(kind, (counts.get(kind) ?? 0) + 1)
  return counts
}

/** Waits (up to `ms`) for timers and sockets to be back to `baseline`; describes the excess if not. */
async function settlesTo(baseline: Map<string, number>, ms: number): Promise<string | undefined> {
  let excess: string[] = []
  const settled = () => {
    const now = resourceCounts()
    excess = [...now].filter(([kind, n]) => n > (baseline.get(kind) ?? 0)).map(([kind, n]) => `${kind} ${n} (baseline ${baseline.get(kind) ?? 0})`)
    return excess.length === 0
  }
  return until('timers and sockets are back to the baseline', settled, { timeout: ms, every: 50 }).then(
    () => undefined,
    () => excess.join(', '),
  )
}
