// iovalkey (the Valkey project's fork of ioredis) is taken by the ioredis adapter, detected by its
// shape: the same contract as the two main clients, against a real redis-server.
import { Redis as Valkey } from 'iovalkey'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { claimFence, createLocks, fencedSet, type Locks } from '../../src/index.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { recordAcquires } from '../../harness/telemetry.js'
import { until } from '../../harness/util.js'

describe.skipIf(!requireRedisOrSkip())('iovalkey client', () => {
  let server: RedisProcess
  let client: Valkey
  let locks: Locks
  beforeAll(async () => {
    server = await startRedis()
    client = new Valkey(server.url)
    locks = createLocks({ redis: client, ttl: 5_000, wait: 5_000 })
  })
  afterAll(async () => {
    await locks?.close()
    client?.disconnect()
    await server?.stop()
  })

  it('acquires with increasing fences, wakes a waiter on release, and guards writes', async () => {
    const acquires = recordAcquires()
    const first = await locks.acquire('valkey')
    const waiting = locks.acquire('valkey', { wait: 4_000 })
    await until('the waiter is in line and subscribed', async () => {
      if ((await locks.inspect('valkey')).waiters !== 1) return false
      return (await server.cli('PUBSUB', 'CHANNELS', '*{valkey}:W*')).trim() !== ''
    })
    expect(await first.release()).toBe(true)
    const second = await waiting
    acquires.stop()
    // Woken by an event, not by the re-check after the 5 s ttl: the release's message, or the look
    // a first wait takes once subscribed, if the release came while that look was in flight.
    const wakes = acquires.wakes('valkey')
    expect(wakes).not.toContain('recheck')
    expect(['release', 'subscribed']).toContain(wakes.at(-1))
    expect(second.fence).toBeGreaterThan(first.fence)
    expect(await claimFence(client, 'valkey:balance', second.fence)).toBe(true)
    expect(await fencedSet(client, 'valkey:balance', '10', first.fence)).toBe(false)
    expect(await fencedSet(client, 'valkey:balance', '20', second.fence)).toBe(true)
    expect(await client.get('valkey:balance')).toBe('20')
    expect(await locks.release('valkey', second.token)).toBe(true)
    expect(await second.release()).toBe(false)
  })

  it('keeps working after SCRIPT FLUSH (EVALSHA falls back to EVAL)', async () => {
    await client.script('FLUSH')
    const lease = await locks.withLock('valkey-flush', (l) => l.fence)
    expect(lease).toBeGreaterThan(0)
  })
})
