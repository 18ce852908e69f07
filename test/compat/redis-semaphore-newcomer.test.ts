// fencelock/redis-semaphore to a newcomer (issue 42): the constructors check the client at
// compile time (redis-semaphore 5.8 types it; `unknown` took anything), and a lock whose Redis
// stops answering is lost at its deadline: isAcquired turns false, onLockLost hears a
// LostLockError and the signal aborts with it, without waiting for Redis to answer again.
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { LostLockError, Mutex, RedlockMutex, Semaphore } from '../../src/compat/redis-semaphore/index.js'
import { useRedis } from '../../harness/per-adapter.js'
import { requireRedisOrSkip } from '../../harness/redis-server.js'
import { until } from '../../harness/util.js'

/** Compiled, never run: each line must fail to type-check (tsc -p . checks the test files). */
export function refusedAtCompileTime(redis: Redis): void {
  // @ts-expect-error: a number is no client
  new Mutex(42, 'k')
  // @ts-expect-error: nor is an object without the client's methods
  new Semaphore({ host: 'localhost' }, 'k', 2)
  // @ts-expect-error: nor a list of them
  new RedlockMutex([redis, 'redis://localhost'], 'k')
  new Mutex(redis, 'k')
}

describe.skipIf(!requireRedisOrSkip())('fencelock/redis-semaphore with Redis paused', () => {
  const server = useRedis()

  it('a Mutex is lost at its deadline while Redis does not answer, not when it answers again', async () => {
    const client = new Redis(server.url, { maxRetriesPerRequest: 0, enableOfflineQueue: true })
    const lockTimeout = 1_000
    const lost: LostLockError[] = []
    const mutex = new Mutex(client, 'paused', { lockTimeout, acquireTimeout: 500, retryInterval: 5, onLockLost: (err) => void lost.push(err) })
    try {
      await mutex.acquire()
      expect(mutex.isAcquired).toBe(true)
      server.redis.pause()
      try {
        // The deadline is lockTimeout after the last refresh was sent; Redis stays paused well past it.
        await until('the lock is lost while Redis is paused', () => !mutex.isAcquired, { timeout: 10 * lockTimeout })
        expect(mutex.signal.aborted).toBe(true)
        expect(mutex.signal.reason).toBeInstanceOf(LostLockError)
        expect(lost).toHaveLength(1)
        expect(lost[0]).toBe(mutex.signal.reason)
      } finally {
        server.redis.resume()
      }
      expect(await client.ping()).toBe('PONG')
      expect(lost).toHaveLength(1)
    } finally {
      await mutex.release().catch(() => {})
      client.disconnect()
    }
  })
})
