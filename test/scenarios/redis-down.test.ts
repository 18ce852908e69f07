// When a wait or a try fails because of Redis, the error says so (RedisError with the cause), not
// LockTimeoutError, which reads as contention; and tryAcquire has a short bound of its own.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createLocks, LockTimeoutError, RedisError } from '../../src/index.js'
import { adapters } from '../../harness/clients.js'
import { requireRedisOrSkip } from '../../harness/redis-server.js'
import { closeQuietly, uniquePrefix } from '../../harness/util.js'
import { useClient, useRedis } from '../../harness/per-adapter.js'
import { recordAcquires } from '../../harness/telemetry.js'

const outcomeOf = (work: Promise<unknown>) =>
  work.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  )

/** The bound a "no reply" RedisError says it gave up at: its own limit in ms, not a measurement. */
const noReplyBound = (error: unknown): number => Number(/No reply from Redis within (\d+) ms/.exec((error as Error).message)?.[1] ?? Number.NaN)

describe.skipIf(!requireRedisOrSkip())('Redis down or refusing', () => {
  describe.each(adapters)('$name', (adapter) => {
    const server = useRedis()
    const t = useClient(adapter, server, { end: 'disconnect' })
    let acquires: ReturnType<typeof recordAcquires>
    beforeEach(() => {
      acquires = recordAcquires()
    })
    afterEach(() => acquires.stop())

    it('Redis paused: acquire with a short wait fails with RedisError ("no reply"), not LockTimeoutError, within the wait', async () => {
      const locks = createLocks({ redis: t.client.raw, prefix: uniquePrefix('paused-acquire') })
      server.redis.pause()
      try {
        const { error } = (await outcomeOf(locks.acquire('r', { ttl: 10_000, wait: 800 }))) as { error: unknown }
        expect(error).toBeInstanceOf(RedisError)
        expect(error).not.toBeInstanceOf(LockTimeoutError)
        expect((error as Error).message).toMatch(/no reply/i)
        // Within the wait: the attempt waited for a reply no longer than the wait, not the lease validity (~9.9 s).
        expect(noReplyBound(error), (error as Error).message).toBeLessThanOrEqual(800)
      } finally {
        server.redis.resume()
        await closeQuietly([locks])
      }
    })

    it('Redis paused: tryAcquire gives up after its own short bound (tryTimeout), not after the lease validity', async () => {
      const locks = createLocks({ redis: t.client.raw, prefix: uniquePrefix('paused-try'), ttl: 30_000 })
      server.redis.pause()
      try {
        const { error } = (await outcomeOf(locks.tryAcquire('r'))) as { error: unknown }
        expect(error).toBeInstanceOf(RedisError)
        // It gave up at its own bound (the lease validity would be ~29.7 s).
        expect(noReplyBound(error), `default tryTimeout is 2 s: ${(error as Error).message}`).toBeLessThanOrEqual(2_000)
        const custom = (await outcomeOf(locks.tryAcquire('r', { timeout: 300 }))) as { error: unknown }
        expect(custom.error).toBeInstanceOf(RedisError)
        expect(noReplyBound(custom.error), (custom.error as Error).message).toBeLessThanOrEqual(300)
      } finally {
        server.redis.resume()
        await closeQuietly([locks])
      }
    })

    it('a read-only Redis (READONLY) ends a wait with RedisError carrying the reply in cause and message', async () => {
      const locks = createLocks({ redis: t.client.raw, prefix: uniquePrefix('readonly') })
      // A replica of nothing: it refuses every write with READONLY.
      await server.redis.cli('REPLICAOF', '127.0.0.1', '1')
      try {
        const { error } = (await outcomeOf(locks.acquire('r', { wait: 500 }))) as { error: unknown }
        expect(error).toBeInstanceOf(RedisError)
        expect((error as Error).message).toMatch(/READONLY/)
        expect(String((error as RedisError).cause)).toMatch(/READONLY/)
      } finally {
        await server.redis.cli('REPLICAOF', 'NO', 'ONE')
        await closeQuietly([locks])
      }
    })

    it('Redis out of memory (OOM) fails acquire at once with RedisError naming OOM', async () => {
      const locks = createLocks({ redis: t.client.raw, prefix: uniquePrefix('oom') })
      await server.redis.cli('CONFIG', 'SET', 'maxmemory-policy', 'noeviction')
      await server.redis.cli('CONFIG', 'SET', 'maxmemory', '1')
      try {
        const { error } = (await outcomeOf(locks.acquire('r', { wait: 2_000 }))) as { error: unknown }
        expect(error).toBeInstanceOf(RedisError)
        expect((error as Error).message).toMatch(/OOM/)
        // A refusal that retrying cannot cure is reported at once: after its first attempt, no retry.
        expect(acquires.of('r'), 'a refusal that retrying cannot cure is reported at once').toMatchObject([{ outcome: 'error', attempts: 1, wakes: [] }])
      } finally {
        await server.redis.cli('CONFIG', 'SET', 'maxmemory', '0')
        await closeQuietly([locks])
      }
    })
  })
})
