// Nested code that takes a lock its own call chain holds (issue 9): it re-enters (reentrant: true)
// or fails at once with LockReentryError; it never waits for itself. A concurrent call chain of the
// same process waits as any other process would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, LockReentryError, type Locks } from '../src/index.js'
import { adapters, type TestClient } from './support/clients.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from './support/redis-server.js'
import { closeQuietly, sleep, uniquePrefix } from './scenarios/fixtures/util.js'

describe.skipIf(!requireRedisOrSkip())('reentrancy', () => {
  let redis: RedisProcess
  beforeAll(async () => {
    redis = await startRedis()
  })
  afterAll(() => redis?.stop())

  describe.each(adapters)('$name', (adapter) => {
    let client: TestClient
    let plain: Locks
    let reentrant: Locks
    beforeAll(async () => {
      client = await adapter.connect(redis.url)
      plain = createLocks({ redis: client.raw, prefix: uniquePrefix('plain') })
      reentrant = createLocks({ redis: client.raw, prefix: uniquePrefix('reentrant'), reentrant: true })
    })
    afterAll(async () => {
      await closeQuietly([plain, reentrant])
      await client?.quit()
    })

    it('reentrant: a nested withLock gets the outer lease at once (same token, fence, signal); only the outermost release frees the lock', async () => {
      const result = await reentrant.withLock('r', async (outer) => {
        const started = performance.now()
        const inner = await reentrant.withLock('r', async (lease) => {
          expect(lease.token).toBe(outer.token)
          expect(lease.fence).toBe(outer.fence)
          expect(lease.signal).toBe(outer.signal)
          // Deeper still, through a timer and a manual acquire.
          const deeper = await new Promise<number>((resolve, reject) => setTimeout(() => reentrant.acquire('r').then((l) => l.release().then(() => resolve(l.fence)), reject), 5))
          expect(deeper).toBe(outer.fence)
          return lease.fence
        })
        expect(performance.now() - started).toBeLessThan(200)
        expect((await reentrant.inspect('r')).token).toBe(outer.token) // inner releases freed nothing
        return inner
      }, { wait: 15_000 })
      expect(typeof result).toBe('number')
      expect((await reentrant.inspect('r')).held).toBe(false)
    })

    it('reentrant: a concurrent call chain of the same process waits for the lock, as another process would', async () => {
      const order: string[] = []
      await Promise.all([
        reentrant.withLock('c', async () => {
          order.push('a in')
          await sleep(200)
          order.push('a out')
        }),
        sleep(20).then(() =>
          reentrant.withLock('c', async () => {
            order.push('b in')
          }),
        ),
      ])
      expect(order).toEqual(['a in', 'a out', 'b in'])
    })

    it('not reentrant: a nested withLock, acquire or tryAcquire of a held resource rejects within milliseconds with LockReentryError, even with wait: Infinity', async () => {
      await plain.withLock('n', async () => {
        for (const nested of [
          () => plain.withLock('n', () => 1, { wait: Infinity }),
          () => plain.acquire('n'),
          () => plain.tryAcquire('n'),
        ]) {
          const started = performance.now()
          const err = await nested().then((v) => v, (e: unknown) => e)
          expect(err).toBeInstanceOf(LockReentryError)
          expect((err as LockReentryError).code).toBe('LOCK_REENTRY')
          expect((err as Error).message).toMatch(/already held by this call chain/)
          expect(performance.now() - started).toBeLessThan(50)
        }
        // Another resource nested inside is an ordinary lock.
        expect(await plain.withLock('other', (l) => l.fence)).toBeGreaterThan(0)
      })
    })
  })
})
