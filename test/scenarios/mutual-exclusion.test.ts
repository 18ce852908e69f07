// Mutual exclusion as the protected data sees it: separate OS processes doing a non-atomic
// read-modify-write (GET, pause, SET) under the lock. One overlap loses an increment.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { adapters, type TestClient } from '../../harness/clients.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { killAllWorkers, spawnWorker } from '../../harness/spawn.js'
import { uniquePrefix } from '../../harness/util.js'

const PROCESSES = 8
const LOOPS = 2 // concurrent loops per process and resource: in-process queueing as well
const ITERATIONS = 6

describe.skipIf(!requireRedisOrSkip())(`mutual exclusion across ${PROCESSES} processes`, () => {
  let redis: RedisProcess
  beforeAll(async () => {
    redis = await startRedis()
  })
  afterEach(killAllWorkers)
  afterAll(() => redis?.stop())

  it(`${PROCESSES} processes, half ioredis and half node-redis, on the same locks: one mutual exclusion for both client libraries`, async () => {
    const control = await adapters[0]!.connect(redis.url)
    try {
      const prefix = uniquePrefix('rmw-mixed')
      const workers = Array.from({ length: PROCESSES }, (_, i) =>
        spawnWorker('counter', adapters[i % adapters.length]!.name, redis.url, { prefix, iterations: ITERATIONS, loops: 1, delayMs: 3, ttl: 5_000 }),
      )
      const reports = await Promise.all(workers.map((w) => w.next('done', 30_000)))
      expect(reports.flatMap((r) => r.violations as string[])).toEqual([])
      const expected = PROCESSES * ITERATIONS
      expect(Number(await control.command('GET', `${prefix}count:acquire`))).toBe(expected)
      expect(Number(await control.command('GET', `${prefix}count:withLock`))).toBe(expected)
      expect((await Promise.all(workers.map((w) => w.exited))).map((e) => e.code)).toEqual(workers.map(() => 0))
    } finally {
      await control.quit()
    }
  }, 60_000)

  describe.each(adapters)('$name', (adapter) => {
    let control: TestClient
    beforeAll(async () => {
      control = await adapter.connect(redis.url)
    })
    afterAll(() => control?.quit())

    it(`${PROCESSES} processes x ${LOOPS} loops: every read-modify-write counted once, fences always grow (acquire/release and withLock)`, async () => {
      const prefix = uniquePrefix(`rmw-${adapter.name}`)
      const workers = Array.from({ length: PROCESSES }, () =>
        spawnWorker('counter', adapter.name, redis.url, { prefix, iterations: ITERATIONS, loops: LOOPS, delayMs: 3, ttl: 5_000 }),
      )
      const started = performance.now()
      // Event-driven handoffs take milliseconds: 96 critical sections per resource finish in a few
      // seconds (~13 s on a loaded 2-core machine). Waiters that only wake on their re-check timer
      // (a ttl, 5 s) take minutes: that is a lost wake-up, not slowness.
      const reports = await Promise.all(workers.map((w) => w.next('done', 30_000))).catch(async (err: unknown) => {
        // Slow or stuck? Say where everyone stands.
        const state: Record<string, unknown> = { seconds: Math.round((performance.now() - started) / 1000) }
        for (const name of ['acquire', 'withLock']) {
          const k = `${prefix}{rmw:${name}}`
          state[name] = {
            count: await control.command('GET', `${prefix}count:${name}`),
            pttl: await control.command('PTTL', `${k}:L`),
            queue: await control.command('ZRANGE', `${k}:Q`, 0, -1),
            expiry: await control.command('ZRANGE', `${k}:X`, 0, -1, 'WITHSCORES'),
            time: await control.command('TIME'),
          }
        }
        throw new Error(`${(err as Error).message}\nstate: ${JSON.stringify(state)}`)
      })
      const exits = await Promise.all(workers.map((w) => w.exited))
      expect(reports.flatMap((r) => r.violations as string[])).toEqual([])
      expect(exits.map((e) => e.code)).toEqual(workers.map(() => 0))
      const expected = PROCESSES * LOOPS * ITERATIONS
      expect(Number(await control.command('GET', `${prefix}count:acquire`))).toBe(expected)
      expect(Number(await control.command('GET', `${prefix}count:withLock`))).toBe(expected)
      // Everything was released, and nobody is left in the fair queue.
      for (const resource of ['rmw:acquire', 'rmw:withLock']) {
        expect(await control.command('EXISTS', `${prefix}{${resource}}:L`)).toBe(0)
        expect(await control.command('ZCARD', `${prefix}{${resource}}:Q`)).toBe(0)
      }
    }, 60_000)
  })
})
