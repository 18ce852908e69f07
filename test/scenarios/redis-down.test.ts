// When a wait or a try fails because of Redis, the error says so (RedisError with the cause), not
// LockTimeoutError, which reads as contention; and tryAcquire has a short bound of its own.
import { describe, expect, it } from 'vitest'
import { createLocks, LockTimeoutError, RedisError } from '../../src/index.js'
import { adapters } from '../../harness/clients.js'
import { requireRedisOrSkip } from '../../harness/redis-server.js'
import { closeQuietly, uniquePrefix } from '../../harness/util.js'
import { useClient, useRedis } from '../../harness/per-adapter.js'

const outcomeOf = async (work: Promise<unknown>) => {
  const started = performance.now()
  const result = await work.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  )
  return { ...result, ms: performance.now() - started }
}

describe.skipIf(!requireRedisOrSkip())('Redis down or refusing', () => {
  describe.each(adapters)('$name', (adapter) => {
    const server = useRedis()
    const t = useClient(adapter, server, { end: 'disconnect' })

    it('Redis paused: acquire with a short wait fails with RedisError ("no reply"), not LockTimeoutError, within the wait', async () => {
      const locks = createLocks({ redis: t.client.raw, prefix: uniquePrefix('paused-acquire') })
      server.redis.pause()
      try {
        const { error, ms } = (await outcomeOf(locks.acquire('r', { ttl: 10_000, wait: 800 }))) as { error: unknown; ms: number }
        expect(error).toBeInstanceOf(RedisError)
        expect(error).not.toBeInstanceOf(LockTimeoutError)
        expect((error as Error).message).toMatch(/no reply/i)
        expect(ms).toBeLessThan(800 + 500)
      } finally {
        server.redis.resume()
        await closeQuietly([locks])
      }
    })

    it('Redis paused: tryAcquire gives up after its own short bound (tryTimeout), not after the lease validity', async () => {
      const locks = createLocks({ redis: t.client.raw, prefix: uniquePrefix('paused-try'), ttl: 30_000 })
      server.redis.pause()
      try {
        const { error, ms } = (await outcomeOf(locks.tryAcquire('r'))) as { error: unknown; ms: number }
        expect(error).toBeInstanceOf(RedisError)
        expect(ms, 'default tryTimeout is 2 s').toBeLessThan(2_000 + 500)
        const custom = (await outcomeOf(locks.tryAcquire('r', { timeout: 300 }))) as { error: unknown; ms: number }
        expect(custom.error).toBeInstanceOf(RedisError)
        expect(custom.ms).toBeLessThan(300 + 400)
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
        const { error, ms } = (await outcomeOf(locks.acquire('r', { wait: 2_000 }))) as { error: unknown; ms: number }
        expect(error).toBeInstanceOf(RedisError)
        expect((error as Error).message).toMatch(/OOM/)
        expect(ms, 'a refusal that retrying cannot cure is reported at once').toBeLessThan(1_000)
      } finally {
        await server.redis.cli('CONFIG', 'SET', 'maxmemory', '0')
        await closeQuietly([locks])
      }
    })
  })
})
