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

  const serverMs = async () => {
    const [s, us] = (await direct.client.time()) as unknown as [string | number, string | number]
    return Number(s) * 1000 + Math.floor(Number(us) / 1000)
  }

  it('reports the node as young until its uptime reaches maxTtl, and its run_id', async () => {
    const uptimeOf = (info: string) => Number(/uptime_in_seconds:(\d+)/.exec(info)![1])
    const info = await direct.client.info('server')
    const runId = /run_id:(\w+)/.exec(info)![1]
    const [code, , young, id, now] = await acquire('young', 'a', '', '', 3_600_000)
    // The script reads the uptime itself, between these two reads: a second may turn in between.
    const [before, after] = [uptimeOf(info), uptimeOf(await direct.client.info('server'))]
    expect(code).toBe(1)
    expect(young).toBeLessThanOrEqual(3_600_000 - before * 1000)
    expect(young).toBeGreaterThanOrEqual(3_600_000 - after * 1000)
    expect(Number(young) % 1000).toBe(0) // whole seconds of uptime
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

  it('a grant with nobody in line takes no place; mutex-undo gives it back and puts the waiter in line with its score, so two waiters that each won a node keep their order', async () => {
    // Two nodes as two key spaces of this server: the scripts see only their keys.
    const nodeA = resourceKeys('A:', 'split')
    const nodeB = resourceKeys('B:', 'split')
    const on = (k: typeof nodeA) => [k.lock, k.fence, k.queue, k.queueExpiry]
    const acquireOn = (k: typeof nodeA, token: string, waiter: string, score: string) =>
      run(scripts.mutexAcquire, on(k), [token, 5_000, 60_000, waiter, 2_000, score, 0]) as Promise<[number, string]>
    // token, waiter, score, keep, channel, grace
    const undoOn = (k: typeof nodeA, token: string, waiter: string, score: string) =>
      run(scripts.mutexUndo, [k.lock, k.queue, k.queueExpiry], [token, waiter, score, 7_000, k.channel, 2_000])
    // 'early' (score 1000) takes node A, 'late' (score 2000) node B, each with nobody in line there.
    expect((await acquireOn(nodeA, 'e1', 'early', '1000'))[0]).toBe(1)
    expect((await acquireOn(nodeB, 'l1', 'late', '2000'))[0]).toBe(1)
    expect(await direct.client.exists(nodeA.queue, nodeA.queueExpiry, nodeB.queue, nodeB.queueExpiry)).toBe(0)
    // Each is refused on the other's node and joins the line there.
    expect((await acquireOn(nodeA, 'l1', 'late', '2000'))[0]).toBe(0)
    expect((await acquireOn(nodeB, 'e1', 'early', '1000'))[0]).toBe(0)
    // Neither has a majority of the two: each undoes its attempt on both nodes.
    expect(await undoOn(nodeA, 'e1', 'early', '1000')).toBe(1)
    expect(await undoOn(nodeB, 'e1', 'early', '1000')).toBe(0)
    expect(await undoOn(nodeB, 'l1', 'late', '2000')).toBe(1)
    expect(await undoOn(nodeA, 'l1', 'late', '2000')).toBe(0)
    expect(await direct.client.exists(nodeA.lock, nodeB.lock)).toBe(0)
    // Both stand in both lines again, in score order: 'late' is refused everywhere, 'early' granted.
    for (const k of [nodeA, nodeB]) expect(await direct.client.zrange(k.queue, 0, -1)).toEqual(['early', 'late'])
    // The lock is free: the head was woken, and keeps its place only the grace (2 s) unless it comes.
    expect(Number(await direct.client.zscore(nodeA.queueExpiry, 'early')) - (await serverMs())).toBeLessThanOrEqual(2_000)
    for (const k of [nodeA, nodeB]) expect((await acquireOn(k, 'l2', 'late', '2000'))[0]).toBe(0)
    for (const k of [nodeA, nodeB]) expect((await acquireOn(k, 'e2', 'early', '1000'))[0]).toBe(1)
    // A waiter already in line keeps its place as it was; an undo without a waiter only gives back.
    const lateUntil = await direct.client.zscore(nodeA.queueExpiry, 'late')
    expect(await undoOn(nodeA, 'l2', 'late', '2000')).toBe(0)
    expect(await direct.client.zscore(nodeA.queueExpiry, 'late')).toBe(lateUntil)
    expect(await undoOn(nodeA, 'e2', '', '')).toBe(1)
    expect(await direct.client.exists(nodeA.lock)).toBe(0)
    expect(await direct.client.zrange(nodeA.queue, 0, -1)).toEqual(['early', 'late'])
    // Where another holds the lock, a place put back lives `keep` (7 s) unless the waiter comes.
    const nodeC = resourceKeys('C:', 'split')
    await direct.client.set(nodeC.lock, 'other', 'PX', 5_000)
    expect(await undoOn(nodeC, 'c1', 'w', '5')).toBe(0)
    const until = Number(await direct.client.zscore(nodeC.queueExpiry, 'w'))
    expect(until - (await serverMs())).toBeGreaterThan(6_000)
    expect(until - (await serverMs())).toBeLessThanOrEqual(7_000)
    expect(await direct.client.pexpiretime(nodeC.queue)).toBe(until)
    expect(await direct.client.get(nodeC.lock)).toBe('other')
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
