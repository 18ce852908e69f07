// Telemetry on node:diagnostics_channel: every event of the README's list is published with its
// fields when someone subscribes (acquire start and end with outcome and wait, extend, lost with
// reason, release, fenced writes refused or accepted), and a lease lost under SIGSTOP shows up.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest'
import {
  claimFence,
  createLocks,
  fencedSet,
  LockAbortedError,
  LockTimeoutError,
  telemetry,
  type AcquireEvent,
  type AcquireStartEvent,
  type ExtendEvent,
  type FencedWriteEvent,
  type Locks,
  type LostEvent,
  type ReleaseEvent,
  type TelemetryEvents,
  RedisError,
} from '../../src/index.js'
import { adapters, type TestClient } from '../../harness/clients.js'
import { scriptCalls } from '../../harness/commandstats.js'
import { docSection } from '../../harness/docs.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { closeQuietly, uniquePrefix, until } from '../../harness/util.js'

const NAMES = [
  'fencelock:acquire:start',
  'fencelock:acquire',
  'fencelock:extend',
  'fencelock:lost',
  'fencelock:release',
  'fencelock:at-risk',
  'fencelock:fenced-write',
] as const

/** The exported payload type of each channel, by name: tsc checks that the keys are exactly TelemetryEvents'. */
const TYPE_NAMES: { readonly [K in keyof TelemetryEvents]: string } = {
  'fencelock:acquire:start': 'AcquireStartEvent',
  'fencelock:acquire': 'AcquireEvent',
  'fencelock:extend': 'ExtendEvent',
  'fencelock:lost': 'LostEvent',
  'fencelock:release': 'ReleaseEvent',
  'fencelock:at-risk': 'AtRiskEvent',
  'fencelock:fenced-write': 'FencedWriteEvent',
}

/** The docs' telemetry table (docs/operating.md, "Telemetry"): channel name -> the row's text. */
function readmeRows(): Map<string, string> {
  const section = docSection('## Telemetry')
  return new Map([...section.matchAll(/^\| `(fencelock:[a-z:-]+)` \|(.*)$/gm)].map((m) => [m[1]!, m[2]!]))
}

describe.skipIf(!requireRedisOrSkip())('telemetry', () => {
  let redis: RedisProcess
  let client: TestClient
  let locks: Locks
  const seen: { name: string; message: Record<string, unknown> }[] = []
  const listeners = NAMES.map((name) => [name, (message: unknown) => seen.push({ name, message: message as Record<string, unknown> })] as const)
  beforeAll(async () => {
    redis = await startRedis()
    client = await adapters[0]!.connect(redis.url)
    locks = createLocks({ redis: client.raw, prefix: uniquePrefix('telemetry') })
    for (const [name, listener] of listeners) subscribe(name, listener)
  })
  afterAll(async () => {
    for (const [name, listener] of listeners) unsubscribe(name, listener)
    await closeQuietly([locks])
    await client?.quit()
    await redis?.stop()
  })
  const of = (name: string) => seen.filter((e) => e.name === name).map((e) => e.message)

  it('publishes acquire (start and end), extend, release, lost and fenced-write events with their fields', async () => {
    const lease = await locks.acquire('t', { ttl: 2_000, wait: 1_000 })
    await lease.extend(2_000)
    expect(await fencedSet(client.raw, 'tdata', 'v', lease.fence)).toBe(true)
    expect(await claimFence(client.raw, 'tdata', lease.fence - 1)).toBe(false) // a stale claim is refused
    const timeout = await locks.acquire('t', { wait: 100 }).catch((e: unknown) => e)
    expect(timeout).toBeInstanceOf(LockTimeoutError)
    await lease.release()
    const short = await locks.acquire('t2', { ttl: 150 })
    await new Promise((resolve) => short.signal.addEventListener('abort', resolve))
    // An extension that fails while the lease is held: at risk (its client was closed under it).
    const riskyClient = await adapters[0]!.connect(redis.url)
    const risky = createLocks({ redis: riskyClient.raw, prefix: uniquePrefix('telemetry-risk') })
    const atRisk = await risky.acquire('t3', { ttl: 30_000 })
    await riskyClient.disconnect()
    await expect(atRisk.extend()).rejects.toBeInstanceOf(RedisError)
    await closeQuietly([risky])

    expect(of('fencelock:acquire:start')).toContainEqual(expect.objectContaining({ kind: 'mutex', resource: 't', ttl: 2_000, wait: 1_000 }))
    expect(of('fencelock:acquire')).toContainEqual(
      expect.objectContaining({ kind: 'mutex', resource: 't', outcome: 'acquired', fence: lease.fence, waitedMs: expect.any(Number) }),
    )
    expect(of('fencelock:acquire')).toContainEqual(expect.objectContaining({ resource: 't', outcome: 'timeout' }))
    expect(of('fencelock:extend')).toContainEqual(expect.objectContaining({ resource: 't', token: lease.token, ttl: 2_000, outcome: 'extended' }))
    expect(of('fencelock:release')).toContainEqual(expect.objectContaining({ resource: 't', token: lease.token, released: true, heldMs: expect.any(Number) }))
    expect(of('fencelock:lost')).toContainEqual(expect.objectContaining({ resource: 't2', token: short.token, reason: 'expired' }))
    // When each began, on the process's monotonic clock: the lease was acquired inside the call
    // that got it, and held from then until its release (or loss) was published.
    const acquired = of('fencelock:acquire').find((e) => e.token === lease.token)!
    const released = of('fencelock:release').find((e) => e.token === lease.token)!
    const lost = of('fencelock:lost').find((e) => e.token === short.token)!
    const shortAcquired = of('fencelock:acquire').find((e) => e.token === short.token)!
    for (const [call, held] of [
      [acquired, released],
      [shortAcquired, lost],
    ] as const) {
      expect(held.acquiredAt).toBeGreaterThanOrEqual(call.startedAt as number)
      expect(held.acquiredAt).toBeLessThanOrEqual((call.startedAt as number) + (call.waitedMs as number))
    }
    expect(of('fencelock:acquire').every((e) => typeof e.startedAt === 'number' && e.startedAt <= performance.timeOrigin + performance.now())).toBe(true)
    expect(of('fencelock:at-risk')).toContainEqual(
      expect.objectContaining({
        kind: 'mutex',
        resource: 't3',
        token: atRisk.token,
        fence: atRisk.fence,
        remainingMs: expect.any(Number),
        error: expect.any(RedisError),
      }),
    )
    expect(of('fencelock:fenced-write')).toContainEqual({ key: 'tdata', fence: lease.fence, accepted: true, operation: 'fencedSet' })
    expect(of('fencelock:fenced-write')).toContainEqual({ key: 'tdata', fence: lease.fence - 1, accepted: false, operation: 'claimFence' })
  })

  it('a lease lost while Redis is frozen (SIGSTOP) shows up as a lost event with the reason', async () => {
    const lease = await locks.acquire('frozen', { ttl: 300, autoExtend: true })
    redis.pause()
    try {
      await new Promise((resolve) => lease.signal.addEventListener('abort', resolve))
    } finally {
      redis.resume()
    }
    const lost = of('fencelock:lost').find((e) => e.token === lease.token)
    expect(lost).toMatchObject({ kind: 'mutex', resource: 'frozen' })
    expect(['expired', 'unreachable']).toContain(lost!.reason)
  })

  it('a lock given back because its caller stopped waiting publishes no release: every released token was reported acquired', async () => {
    for (let i = 0; i < 20; i++) {
      const controller = new AbortController()
      const pending = locks.acquire(`gb${i}`, { signal: controller.signal })
      controller.abort() // while the first attempt is in flight: its grant is given back
      await expect(pending).rejects.toBeInstanceOf(LockAbortedError)
    }
    for (let i = 0; i < 20; i++) await until(`gb${i} free`, async () => !(await locks.inspect(`gb${i}`)).held, { timeout: 5_000, every: 20 })
    const acquired = new Set(
      of('fencelock:acquire')
        .filter((e) => e.outcome === 'acquired')
        .map((e) => e.token),
    )
    const released = of('fencelock:release').filter((e) => String(e.resource).startsWith('gb'))
    expect(released.filter((e) => !acquired.has(e.token))).toEqual([])
    expect(of('fencelock:acquire').filter((e) => String(e.resource).startsWith('gb') && e.outcome === 'aborted')).toHaveLength(20)
  })

  it('a waiter woken by the release says so: its acquire event names why each later attempt went out', async () => {
    const holder = await locks.acquire('woken', { ttl: 30_000 })
    await redis.cli('CONFIG', 'RESETSTAT')
    const waiting = locks.acquire('woken', { wait: 20_000 })
    // Both of the waiter's looks done: its first attempt, and the one it takes once its channel is
    // subscribed (a first wait subscribes after its attempt went out). A release while that second
    // look is in flight could let it find the lock free: then no message would have woken it.
    await until("the waiter's two looks ran in Redis", async () => (await scriptCalls(redis)) >= 2)
    await holder.release()
    await (await waiting).release()
    const woken = of('fencelock:acquire')
      .filter((e) => e.resource === 'woken' && e.outcome === 'acquired')
      .at(-1) as unknown as AcquireEvent
    // Woken by the release's message, not by the re-check at the holder's 30 s ttl (a first wait
    // subscribes after its attempt went out, and looks once more when the subscription is active).
    expect(woken.wakes.at(-1)).toBe('release')
    expect(woken.wakes.filter((w) => w !== 'subscribed')).toEqual(['release'])
    expect(woken.attempts).toBe(woken.wakes.length + 1)
    expect((of('fencelock:acquire').find((e) => e.token === holder.token) as unknown as AcquireEvent).wakes).toEqual([])
  })

  it('a waiter whose holder vanished without a release is woken by its re-check, and one behind another acquire of this process by its turn', async () => {
    const holder = await locks.acquire('vanished', { ttl: 300 })
    const first = locks.acquire('vanished', { wait: 20_000 })
    const second = locks.acquire('vanished', { wait: 20_000 })
    await until('the first waiter is in line', async () => (await locks.inspect('vanished')).waiters === 1)
    holder.signal.addEventListener('abort', () => {}) // the holder is never released: its key expires (time must pass)
    const lease = await first
    await lease.release()
    await (await second).release()
    const events = of('fencelock:acquire').filter((e) => e.resource === 'vanished' && e.outcome === 'acquired') as unknown as AcquireEvent[]
    expect(events[1]!.wakes).toContain('recheck')
    expect(events[1]!.wakes).not.toContain('release')
    expect(events[2]!.wakes[0]).toBe('turn')
    await holder.release().catch(() => {})
  })

  it('each channel has its exported payload type, and the README names every channel with its type and every field published', async () => {
    expectTypeOf(telemetry.acquireStart.subscribe).parameter(0).parameter(0).toEqualTypeOf<AcquireStartEvent>()
    expectTypeOf(telemetry.acquire.subscribe).parameter(0).parameter(0).toEqualTypeOf<AcquireEvent>()
    expectTypeOf(telemetry.extend.subscribe).parameter(0).parameter(0).toEqualTypeOf<ExtendEvent>()
    expectTypeOf(telemetry.lost.subscribe).parameter(0).parameter(0).toEqualTypeOf<LostEvent>()
    expectTypeOf(telemetry.release.subscribe).parameter(0).parameter(0).toEqualTypeOf<ReleaseEvent>()
    expectTypeOf(telemetry.fencedWrite.subscribe).parameter(0).parameter(0).toEqualTypeOf<FencedWriteEvent>()
    expectTypeOf<TelemetryEvents['fencelock:acquire']>().toEqualTypeOf<AcquireEvent>()
    expectTypeOf<AcquireEvent['outcome']>().toEqualTypeOf<'acquired' | 'busy' | 'timeout' | 'aborted' | 'error'>()
    expectTypeOf<LostEvent['reason']>().toEqualTypeOf<'expired' | 'refused' | 'unreachable' | 'closed' | 'revoked'>()

    expect(
      Object.values(telemetry)
        .map((c) => c.name)
        .sort(),
    ).toEqual([...NAMES].sort())
    const rows = readmeRows()
    expect([...rows.keys()].sort()).toEqual([...NAMES].sort())
    for (const name of NAMES) expect(rows.get(name), name).toContain(`\`${TYPE_NAMES[name]}\``)
    // Every field of every message the first test saw is in its channel's row.
    for (const name of NAMES) {
      const row = rows.get(name)!
      const fields = new Set([...row.matchAll(/[{,] ?(\w+)\??(?=[:,} ])/g)].map((m) => m[1]))
      const published = new Set(of(name).flatMap((m) => Object.keys(m)))
      expect(published.size, name).toBeGreaterThan(0)
      expect(
        [...published].filter((key) => !fields.has(key)),
        name,
      ).toEqual([])
    }

    // A typed listener gets the payload as published.
    const released: ReleaseEvent[] = []
    const onRelease = (event: ReleaseEvent) => void released.push(event)
    telemetry.release.subscribe(onRelease)
    try {
      const lease = await locks.acquire('typed')
      await lease.release()
      expect(released).toContainEqual(expect.objectContaining({ kind: 'mutex', resource: 'typed', token: lease.token, fence: lease.fence, released: true }))
    } finally {
      telemetry.release.unsubscribe(onRelease)
    }
  })
})
