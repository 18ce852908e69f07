// The one fence of an all-or-nothing lease, once per client adapter: larger than every earlier
// fence of each of its resources, and stored as each resource's last fence, so a later single lease
// of any of them gets a larger one. A resource whose stored fence is ahead of the server clock
// (a fence from a quorum's write-back, or from before the clock stepped back) shows both: TIME
// alone would hand out a smaller fence.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type Locks } from '../../../src/index.js'
import { adapters, type TestClient } from '../../../harness/clients.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../../harness/redis-server.js'
import { closeQuietly, keysOf, uniquePrefix } from '../../../harness/util.js'

describe.skipIf(!requireRedisOrSkip())('all-or-nothing fences', () => {
  let redis: RedisProcess
  beforeAll(async () => {
    redis = await startRedis()
  })
  afterAll(() => redis?.stop())

  describe.each(adapters)('$name', (adapter) => {
    let client: TestClient
    let locks: Locks
    let other: Locks
    let prefix: string
    beforeAll(async () => {
      client = await adapter.connect(redis.url)
      prefix = uniquePrefix('multi-fence')
      locks = createLocks({ redis: client.raw, prefix })
      other = createLocks({ redis: client.raw, prefix })
    })
    afterAll(async () => {
      await closeQuietly([locks, other])
      await client?.quit()
    })

    it("with one resource's fence ahead of the clock: the lease's fence is above it, and later single leases of every resource are above the lease's", async () => {
      const [seconds, micros] = (await client.command('TIME')) as [string, string]
      const ahead = Number(seconds) * 1_000_000 + Number(micros) + 1_000_000_000_000 // ~11 days
      await client.command('SET', keysOf(prefix, 'b').fence, String(ahead), 'PX', 600_000)
      const lease = await locks.acquireAll(['a', 'b'])
      expect(lease.fence).toBeGreaterThan(ahead)
      expect(lease.fences).toEqual({ a: lease.fence, b: lease.fence })
      expect(await lease.release()).toBe(true)
      for (const resource of ['a', 'b']) {
        const single = await other.acquire(resource)
        expect(single.fence, resource).toBeGreaterThan(lease.fence)
        await single.release()
      }
    })
  })
})
