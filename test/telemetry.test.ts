// Telemetry on node:diagnostics_channel: every event of the README's list is published with its
// fields when someone subscribes (acquire start and end with outcome and wait, extend, lost with
// reason, release, fenced writes refused or accepted), and a lease lost under SIGSTOP shows up.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { claimFence, createLocks, fencedSet, LockAbortedError, LockTimeoutError, type Locks } from '../src/index.js'
import { adapters, type TestClient } from './support/clients.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from './support/redis-server.js'
import { closeQuietly, uniquePrefix, waitUntil } from './scenarios/fixtures/util.js'

const NAMES = ['fencelock:acquire:start', 'fencelock:acquire', 'fencelock:extend', 'fencelock:lost', 'fencelock:release', 'fencelock:fenced-write'] as const

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

    expect(of('fencelock:acquire:start')).toContainEqual(expect.objectContaining({ kind: 'mutex', resource: 't', ttl: 2_000, wait: 1_000 }))
    expect(of('fencelock:acquire')).toContainEqual(expect.objectContaining({ kind: 'mutex', resource: 't', outcome: 'acquired', fence: lease.fence, waitedMs: expect.any(Number) }))
    expect(of('fencelock:acquire')).toContainEqual(expect.objectContaining({ resource: 't', outcome: 'timeout' }))
    expect(of('fencelock:extend')).toContainEqual(expect.objectContaining({ resource: 't', token: lease.token, ttl: 2_000, outcome: 'extended' }))
    expect(of('fencelock:release')).toContainEqual(expect.objectContaining({ resource: 't', token: lease.token, released: true, heldMs: expect.any(Number) }))
    expect(of('fencelock:lost')).toContainEqual(expect.objectContaining({ resource: 't2', token: short.token, reason: 'expired' }))
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
    for (let i = 0; i < 20; i++) await waitUntil(`gb${i} free`, async () => !(await locks.inspect(`gb${i}`)).held, 5_000, 20)
    const acquired = new Set(of('fencelock:acquire').filter((e) => e.outcome === 'acquired').map((e) => e.token))
    const released = of('fencelock:release').filter((e) => String(e.resource).startsWith('gb'))
    expect(released.filter((e) => !acquired.has(e.token))).toEqual([])
    expect(of('fencelock:acquire').filter((e) => String(e.resource).startsWith('gb') && e.outcome === 'aborted')).toHaveLength(20)
  })
})
