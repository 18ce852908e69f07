// The quorum scripts on their own, against a real redis-server: restart detection, one queue order
// from client-chosen scores, and the conditional fence write-back.
import { describe, expect, it } from 'vitest'
import { mutexKeys as resourceKeys } from '../../../src/primitives/mutex/mutex.js'
import { scripts, type LuaScript } from '../../../src/lua/index.js'
import { requireRedisOrSkip } from '../../../harness/redis-server.js'
import { useIoredis, useRedis } from '../../../harness/per-adapter.js'

describe.skipIf(!requireRedisOrSkip())('quorum scripts', () => {
  const server = useRedis()
  const direct = useIoredis(server)

  const run = (script: LuaScript, keys: string[], args: (string | number)[]) => direct.client.eval(script.source, keys.length, ...keys, ...args)
  const keysOf = (resource: string) => {
    const k = resourceKeys('t:', resource)
    return [k.lock, k.fence, k.queue, k.queueExpiry]
  }
  // token, ttl, retention, waiter, grace, score, maxTtl
  const acquire = (resource: string, token: string, waiter = '', score = '', maxTtl = 0) =>
    run(scripts.mutexAcquire, keysOf(resource), [token, 5_000, 60_000, waiter, 2_000, score, maxTtl]) as Promise<
      [number, string | number, number, string, string]
    >

  it('reports the node as young until its uptime reaches maxTtl, and its run_id', async () => {
    const info = await direct.client.info('server')
    const runId = /run_id:(\w+)/.exec(info)![1]
    const uptime = Number(/uptime_in_seconds:(\d+)/.exec(info)![1])
    const [code, , young, id, now] = await acquire('young', 'a', '', '', 3_600_000)
    expect(code).toBe(1)
    expect(young).toBe(3_600_000 - uptime * 1000)
    expect(id).toBe(runId)
    const time = (await direct.client.time()) as unknown as [string | number, string | number]
    expect(Math.abs(Number(now) - (Number(time[0]) * 1e6 + Number(time[1])))).toBeLessThan(1e6)
    expect((await acquire('young-0', 'a'))[2]).toBe(0)
  })

  it('orders waiters by the client score, even one that arrives here last', async () => {
    expect((await acquire('order', 'holder'))[0]).toBe(1)
    expect((await acquire('order', 'x', 'late', '2000'))[0]).toBe(0)
    expect((await acquire('order', 'y', 'early', '1000'))[0]).toBe(0)
    await direct.client.del(keysOf('order')[0]!) // the holder's lock ends
    // 'late' asked first here, but 'early' has the lower score: 'late' is refused, 'early' granted.
    expect((await acquire('order', 'x', 'late', '2000'))[0]).toBe(0)
    const [granted, fence] = await acquire('order', 'y', 'early', '1000')
    expect(granted).toBe(1)
    // Granted, it keeps its place: if its quorum fails and the grant is undone, it is still first.
    expect(await direct.client.zrange(keysOf('order')[2]!, 0, -1)).toEqual(['early', 'late'])
    expect(await run(scripts.mutexConfirm, keysOf('order'), ['y', fence, 60_000, 'early'])).toBe(1)
    expect(await direct.client.zrange(keysOf('order')[2]!, 0, -1)).toEqual(['late'])
  })

  it('gives a retry with the same token its grant back (the first reply was lost)', async () => {
    const [, fence] = await acquire('retry', 'tok', 'w1', '5')
    await direct.client.pexpire(keysOf('retry')[0]!, 100)
    const [code, again] = await acquire('retry', 'tok', 'w1', '5')
    expect(code).toBe(1)
    expect(String(again)).toBe(String(fence))
    expect(await direct.client.pttl(keysOf('retry')[0]!)).toBeGreaterThan(4_000)
    expect((await acquire('retry', 'other', 'w2', '1'))[0]).toBe(0)
  })

  it('writes the fence back only while the token holds the lock, and never lowers it', async () => {
    const [, fence] = await acquire('commit', 'mine')
    const high = String(BigInt(fence) + 1_000_000_000n) // 1,000 s above server TIME
    expect(await run(scripts.mutexConfirm, keysOf('commit'), ['other', high, 60_000, ''])).toBe(0)
    expect(await direct.client.get(keysOf('commit')[1]!)).toBe(String(fence))
    expect(await run(scripts.mutexConfirm, keysOf('commit'), ['mine', high, 60_000, ''])).toBe(1)
    expect(await direct.client.get(keysOf('commit')[1]!)).toBe(high)
    expect(await run(scripts.mutexConfirm, keysOf('commit'), ['mine', '5', 60_000, ''])).toBe(1)
    expect(await direct.client.get(keysOf('commit')[1]!)).toBe(high)
    expect(await direct.client.pttl(keysOf('commit')[1]!)).toBeGreaterThan(59_000)
    // The next grant on this node starts above the written-back fence.
    await direct.client.del(keysOf('commit')[0]!)
    const [, next] = await acquire('commit', 'next')
    expect(BigInt(next)).toBe(BigInt(high) + 1n)
  })
})
