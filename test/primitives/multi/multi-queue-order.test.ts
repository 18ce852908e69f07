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
import { recordAcquires } from '../../../harness/telemetry.js'
import { keysOf, uniquePrefix, until } from '../../../harness/util.js'

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
    const control = direct[0]!
    const keys = { A: keysOf(options.prefix, 'A'), B: keysOf(options.prefix, 'B') }
    const inLine = async (n: number) => (await control.zcard(keys.A.queue)) === n && (await control.zcard(keys.B.queue)) === n
    const acquires = recordAcquires()
    try {
      const a = await h.acquire('A', { ttl: 10_000 })
      const b = await h.acquire('B', { ttl: 10_000 })
      const xDone = x.acquireAll(['A', 'B'], { wait: 6_000 }).then((l) => l.release())
      await until('X waits in line for A and B', () => inLine(1))
      const [xId] = await control.zrange(keys.A.queue, 0, 0)
      const yDone = y.acquireAll(['B', 'A'], { wait: 6_000 }).then((l) => l.release())
      await until('Y waits in line behind X for both', () => inLine(2))
      proxy.setDelay(300) // from now on X hears and answers late
      await a.release() // caps X's place in A at the grace; Y, on standby, prunes X from A after it
      const releasedAt = Number((await control.time())[0]) * 1_000
      // X's late attempt is in once its place in A lasts again past the grace (till B's ttl).
      await until("X's late attempt reached Redis", async () => Number(await control.zscore(keys.A.queueExpiry, xId!)) > releasedAt + 2_000, {
        timeout: 5_000,
      })
      proxy.heal()
      await slow.ping() // behind X's late reply on its connection: X has heard it
      await b.release()
      await Promise.all([xDone, yDone])
      // Both locks free: each took the pair on an attempt that a release sent (the last lock's, then
      // the other's), not after waiting for the other until a re-check or a give-up.
      const granted = acquires.events.filter((e) => e.kind === 'multi' && e.outcome === 'acquired')
      expect(granted.map((e) => e.wakes.at(-1))).toEqual(['release', 'release'])
    } finally {
      acquires.stop()
      await Promise.all([h, x, y].map((l) => l.close()))
      for (const c of [...direct, slow]) c.disconnect()
    }
  }, 20_000)
})
