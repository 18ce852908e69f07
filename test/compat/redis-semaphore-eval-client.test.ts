// fencelock/redis-semaphore accepts, as redis-semaphore does, any "ioredis-like" client that has
// evalsha and eval, also one fencelock has no adapter for. Here such a client is a plain object
// that hands its calls to ioredis on a real redis-server: a Mutex and a Semaphore on it exclude,
// release and hand over, and a SCRIPT FLUSH between two calls (NOSCRIPT) costs nothing but an EVAL.
import { Redis } from 'ioredis'
import { afterAll, beforeAll, expect, it } from 'vitest'
import * as dropIn from '../../src/compat/redis-semaphore/index.js'
import { describeRedis } from '../../harness/per-adapter.js'

describeRedis('fencelock/redis-semaphore on an ioredis-like client without an adapter', (server) => {
  let redis: Redis
  const sent: string[] = []
  // Only evalsha and eval: nothing fencelock could recognise as a client it has an adapter for.
  const evalOnly = {
    evalsha: (sha: string, numKeys: number, ...rest: (string | number)[]) => {
      sent.push('EVALSHA')
      return redis.evalsha(sha, numKeys, ...rest)
    },
    eval: (source: string, numKeys: number, ...rest: (string | number)[]) => {
      sent.push('EVAL')
      return redis.eval(source, numKeys, ...rest)
    },
  }
  beforeAll(() => {
    redis = new Redis(server.url)
  })
  afterAll(() => redis.disconnect())

  it('a Mutex excludes a second holder, releases, and survives a SCRIPT FLUSH (EVAL again on NOSCRIPT)', async () => {
    const options = { lockTimeout: 5_000, acquireTimeout: 300, retryInterval: 10 }
    const a = new dropIn.Mutex(evalOnly as never, 'eval-client:mutex', options)
    const b = new dropIn.Mutex(evalOnly as never, 'eval-client:mutex', options)
    expect(await a.tryAcquire()).toBe(true)
    expect(await redis.get('mutex:eval-client:mutex')).toBe(a.identifier)
    expect(await b.tryAcquire()).toBe(false)
    await a.release()
    expect(await redis.exists('mutex:eval-client:mutex')).toBe(0)
    // The acquire script was sent before: EVALSHA, refused with NOSCRIPT, then EVAL.
    await redis.script('FLUSH')
    sent.length = 0
    expect(await b.tryAcquire()).toBe(true)
    expect(sent).toEqual(['EVALSHA', 'EVAL'])
    await b.release()
  })

  it('a Semaphore of 2 admits two holders, refuses a third, and hands the freed permit on', async () => {
    const options = { lockTimeout: 5_000, acquireTimeout: 300, retryInterval: 10 }
    const [a, b, c] = [0, 1, 2].map(() => new dropIn.Semaphore(evalOnly as never, 'eval-client:sem', 2, options))
    expect(await a!.tryAcquire()).toBe(true)
    expect(await b!.tryAcquire()).toBe(true)
    expect(await c!.tryAcquire()).toBe(false)
    expect(await redis.zcard('semaphore:eval-client:sem')).toBe(2)
    await a!.release()
    expect(await c!.tryAcquire()).toBe(true)
    await Promise.all([b!.release(), c!.release()])
    expect(await redis.zcard('semaphore:eval-client:sem')).toBe(0)
  })
})
