// Two all-or-nothing waiters for the same pair must not wait for each other with both locks free
// (found by the verify harness's transfer mode; verify/repro/multi-queue-order.ts). X's place in
// A's queue is capped at the grace when A is released to it; X answers late (a slow connection),
// after Y has pruned it from A; X then rejoined A behind Y but kept its earlier place in B: in A, X
// waited for Y, in B, Y for X, until one gave up. A waiter now keeps one score in all its queues.
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks } from '../../../src/index.js'
import { startFaultProxy, type FaultProxy } from '../../../harness/fault-proxy.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../../harness/redis-server.js'
import { sleep, uniquePrefix } from '../../../harness/util.js'

describe.skipIf(!requireRedisOrSkip())('all-or-nothing waiters and queue order', () => {
  let redis: RedisProcess
  let proxy: FaultProxy
  beforeAll(async () => {
    redis = await startRedis()
    proxy = await startFaultProxy({ host: redis.host, port: redis.port })
  })
  afterAll(async () => {
    await proxy?.close()
    await redis?.stop()
  })

  it('a waiter pruned from one of its queues and back in it keeps its place there: no mutual wait with both locks free', async () => {
    const direct = [new Redis(redis.url), new Redis(redis.url)]
    const slow = new Redis({ host: proxy.host, port: proxy.port })
    const options = { prefix: uniquePrefix('order'), ttl: 1_000 } // waiterGrace: 250 ms
    const [h, y, x] = [createLocks({ redis: direct[0]!, ...options }), createLocks({ redis: direct[1]!, ...options }), createLocks({ redis: slow, ...options })]
    try {
      const a = await h.acquire('A', { ttl: 10_000 })
      const b = await h.acquire('B', { ttl: 10_000 })
      const xDone = x.acquireAll(['A', 'B'], { wait: 6_000 }).then((l) => l.release())
      await sleep(100)
      const yDone = y.acquireAll(['B', 'A'], { wait: 6_000 }).then((l) => l.release())
      await sleep(200)
      proxy.setDelay(300) // from now on X hears and answers late
      await a.release()
      await sleep(1_500)
      proxy.heal()
      const last = performance.now()
      await b.release()
      await Promise.all([xDone, yDone])
      expect(performance.now() - last, 'ms until both had the pair after the last release').toBeLessThan(1_000)
    } finally {
      await Promise.all([h, x, y].map((l) => l.close()))
      for (const c of [...direct, slow]) c.disconnect()
    }
  }, 20_000)
})
