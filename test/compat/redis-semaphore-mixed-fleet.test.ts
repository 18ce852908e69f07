// A rolling upgrade from redis-semaphore: processes on the original library and processes on
// fencelock/redis-semaphore contend for the same keys, each on a connection of its own. Mutex: a
// read-modify-write counter loses no update. Semaphore of 2 (and a MultiSemaphore taking 2 of 4
// beside Semaphores taking 1): never more inside than the limit, counted by the protected side.
import { Redis } from 'ioredis'
import * as original from 'redis-semaphore'
import { afterAll, beforeAll, expect, it } from 'vitest'
import * as dropIn from '../../src/compat/redis-semaphore/index.js'
import { describeRedis } from '../../harness/per-adapter.js'
import { sleep } from '../../harness/util.js'

const OPTIONS = { lockTimeout: 2_000, acquireTimeout: 15_000, retryInterval: 5 }

describeRedis('redis-semaphore mixed fleet: original and drop-in processes exclude each other', (server) => {
  const clients: Redis[] = []
  let control: Redis
  beforeAll(() => {
    control = new Redis(server.url)
  })
  afterAll(() => {
    for (const c of [...clients, control]) c.disconnect()
  })
  /** A connection of its own, as another process has. */
  const connect = () => {
    const c = new Redis(server.url)
    clients.push(c)
    return c
  }

  it('Mutex: 3 original and 3 drop-in holders increment a counter by GET then SET; no update is lost', async () => {
    const ROUNDS = 15
    const work = async (make: (c: Redis) => { acquire(): Promise<void>; release(): Promise<void> }) => {
      const mutex = make(connect())
      for (let i = 0; i < ROUNDS; i++) {
        await mutex.acquire()
        const seen = Number(await control.get('mf:counter'))
        await sleep(1) // time must pass: a gap between read and write, where a second holder would lose an update
        await control.set('mf:counter', seen + 1)
        await mutex.release()
      }
    }
    await Promise.all([
      ...[0, 1, 2].map(() => work((c) => new original.Mutex(c, 'mf-mutex', OPTIONS))),
      ...[0, 1, 2].map(() => work((c) => new dropIn.Mutex(c, 'mf-mutex', OPTIONS))),
    ])
    expect(Number(await control.get('mf:counter'))).toBe(6 * ROUNDS)
    expect(await control.get('mutex:mf-mutex')).toBeNull()
  }, 19_000)

  it('Semaphore of 2: 3 original and 3 drop-in holders, never more than 2 inside; MultiSemaphore 2 of 4 beside Semaphores', async () => {
    const inside = { now: 0, max: 0 }
    const enter = async (weight: number) => {
      inside.now += weight
      inside.max = Math.max(inside.max, inside.now)
      await sleep(3) // time must pass: a permit held for a moment, so that holders overlap up to the limit
      inside.now -= weight
    }
    const work = async (lock: { acquire(): Promise<void>; release(): Promise<void> }, weight: number, rounds: number) => {
      for (let i = 0; i < rounds; i++) {
        await lock.acquire()
        await enter(weight)
        await lock.release()
      }
    }
    await Promise.all([
      ...[0, 1, 2].map(() => work(new original.Semaphore(connect(), 'mf-sem', 2, OPTIONS), 1, 15)),
      ...[0, 1, 2].map(() => work(new dropIn.Semaphore(connect(), 'mf-sem', 2, OPTIONS), 1, 15)),
    ])
    expect(inside.max, 'permits held at once').toBe(2)
    expect(await control.zcard('semaphore:mf-sem')).toBe(0)

    inside.max = 0
    await Promise.all([
      work(new original.MultiSemaphore(connect(), 'mf-multi', 4, 2, OPTIONS), 2, 10),
      work(new dropIn.MultiSemaphore(connect(), 'mf-multi', 4, 2, OPTIONS), 2, 10),
      work(new dropIn.MultiSemaphore(connect(), 'mf-multi', 4, 3, OPTIONS), 3, 10),
      work(new original.Semaphore(connect(), 'mf-multi', 4, OPTIONS), 1, 10),
      work(new dropIn.Semaphore(connect(), 'mf-multi', 4, OPTIONS), 1, 10),
    ])
    expect(inside.max).toBeLessThanOrEqual(4)
    expect(inside.max).toBeGreaterThanOrEqual(3)
    expect(await control.zcard('semaphore:mf-multi')).toBe(0)
  }, 19_000)
})
