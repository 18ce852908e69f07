// A re-entered handle (reentrant: true) ends only itself, once per client adapter: `await using`
// of a nested acquire, or its release(), leaves the lock with the outermost holder, whose lease
// stays held and unaborted until it ends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type Locks } from '../../src/index.js'
import { adapters, type TestClient } from '../../harness/clients.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { closeQuietly, uniquePrefix } from '../../harness/util.js'

describe.skipIf(!requireRedisOrSkip())('re-entered leases end only themselves', () => {
  let redis: RedisProcess
  beforeAll(async () => {
    redis = await startRedis()
  })
  afterAll(() => redis?.stop())

  describe.each(adapters)('$name', (adapter) => {
    let client: TestClient
    let reentrant: Locks
    let other: Locks
    beforeAll(async () => {
      client = await adapter.connect(redis.url)
      const prefix = uniquePrefix('reenter-nested')
      reentrant = createLocks({ redis: client.raw, prefix, reentrant: true })
      other = createLocks({ redis: client.raw, prefix })
    })
    afterAll(async () => {
      await closeQuietly([reentrant, other])
      await client?.quit()
    })

    it('`await using` and release() of nested handles end those handles; the outermost holder keeps the lock until it ends', async () => {
      await reentrant.withLock('n', async (outer) => {
        const stillHeld = async (after: string) => {
          expect((await other.inspect('n')).token, after).toBe(outer.token)
          expect(outer.held, after).toBe(true)
          expect(outer.signal.aborted, after).toBe(false)
          expect(await other.tryAcquire('n'), after).toBeNull()
        }
        {
          await using inner = await reentrant.acquire('n')
          expect(inner.token).toBe(outer.token)
        }
        await stillHeld('after `await using` of a nested acquire')
        const viaTry = (await reentrant.tryAcquire('n'))!
        expect(viaTry.token).toBe(outer.token)
        await viaTry[Symbol.asyncDispose]()
        expect(viaTry.held).toBe(false)
        await stillHeld('after disposing a nested tryAcquire')
        const released = await reentrant.acquire('n')
        expect(await released.release()).toBe(true)
        expect(released.held).toBe(false)
        await stillHeld('after release() of a nested acquire')
      })
      expect((await other.inspect('n')).held).toBe(false)
    })
  })
})
