// A Redis user without one of the rights fencelock needs (PUBLISH, SUBSCRIBE, EVALSHA): the caller
// learns at once which permission is missing, never a hang, a silent poll or a plain timeout; a
// release whose wake-up is refused says that the lock was released all the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, RedisError } from '../../src/index.js'
import { adapters, type TestClient } from '../support/clients.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../support/redis-server.js'
import { closeQuietly, keysOf, uniquePrefix } from './fixtures/util.js'

describe.skipIf(!requireRedisOrSkip())('Redis user without PUBLISH', () => {
  let redis: RedisProcess
  beforeAll(async () => {
    redis = await startRedis()
    await redis.cli('ACL', 'SETUSER', 'nopub', 'on', '>pw', '~*', '&*', '+@all', '-publish')
    await redis.cli('ACL', 'SETUSER', 'nosub', 'on', '>pw', '~*', '&*', '+@all', '-subscribe')
    await redis.cli('ACL', 'SETUSER', 'noevalsha', 'on', '>pw', '~*', '&*', '+@all', '-evalsha')
  })
  afterAll(() => redis?.stop())

  describe.each(adapters)('$name', (adapter) => {
    let nopub: TestClient
    let full: TestClient
    beforeAll(async () => {
      nopub = await adapter.connect(redis.url.replace('redis://', 'redis://nopub:pw@'))
      full = await adapter.connect(redis.url)
    })
    afterAll(async () => {
      await nopub?.quit()
      await full?.quit()
    })

    it('release() releases, then rejects with RedisError naming the missing PUBLISH permission; the lease counts as released', async () => {
      const prefix = uniquePrefix('nopub')
      const holderLocks = createLocks({ redis: nopub.raw, prefix })
      const waiterLocks = createLocks({ redis: full.raw, prefix })
      try {
        const lease = await holderLocks.acquire('r', { ttl: 2_000 })
        const waiting = waiterLocks.acquire('r', { wait: 15_000 })
        await new Promise((r) => setTimeout(r, 200)) // the waiter is in line
        const err = await lease.release().then((v) => v, (e: unknown) => e)
        expect(err).toBeInstanceOf(RedisError)
        expect((err as Error).message).toMatch(/released/i)
        expect((err as Error).message).toMatch(/PUBLISH/)
        expect(String((err as RedisError).cause)).toMatch(/NOPERM|can't run this command/)
        expect(await full.command('EXISTS', keysOf(prefix, 'r').lock)).not.toBe(1) // the lock is free or the waiter's
        expect(await lease.release()).toBe(false) // already released: nothing more to do
        // The waiter's re-check still gets it, within the holder's ttl (2 s) instead of at once.
        const next = await waiting
        await next.release()
      } finally {
        await closeQuietly([holderLocks, waiterLocks])
      }
    }, 20_000)

    it('a waiter whose user may not SUBSCRIBE fails at once with RedisError naming the permission, instead of polling silently', async () => {
      const prefix = uniquePrefix('nosub')
      const nosub = await adapter.connect(redis.url.replace('redis://', 'redis://nosub:pw@'))
      const holderLocks = createLocks({ redis: full.raw, prefix })
      const waiterLocks = createLocks({ redis: nosub.raw, prefix })
      try {
        const lease = await holderLocks.acquire('r', { ttl: 10_000 })
        const started = performance.now()
        const err = await waiterLocks.acquire('r', { wait: 8_000 }).then((v) => v, (e: unknown) => e)
        expect(err).toBeInstanceOf(RedisError)
        expect((err as Error).message).toMatch(/SUBSCRIBE/)
        expect(String((err as RedisError).cause)).toMatch(/NOPERM|permission/i)
        expect(performance.now() - started, 'at once, not at the end of the wait').toBeLessThan(2_000)
        await lease.release()
      } finally {
        await closeQuietly([holderLocks, waiterLocks])
        await nosub.quit()
      }
    }, 20_000)

    it('a user without EVALSHA gets RedisError naming the command at once, not a timeout', async () => {
      const client = await adapter.connect(redis.url.replace('redis://', 'redis://noevalsha:pw@'))
      const locks = createLocks({ redis: client.raw, prefix: uniquePrefix('noevalsha') })
      try {
        // The first call of a script is an EVAL (it loads the script); later calls are EVALSHA.
        await (await locks.acquire('r')).release().catch(() => {})
        const started = performance.now()
        const err = await locks.acquire('r', { wait: 5_000 }).then((v) => v, (e: unknown) => e)
        expect(err).toBeInstanceOf(RedisError)
        expect((err as Error).message).toMatch(/evalsha/i)
        expect(performance.now() - started).toBeLessThan(1_000)
      } finally {
        await closeQuietly([locks])
        await client.quit()
      }
    })
  })
})
