// A Redis user without one of the rights fencelock needs (PUBLISH, SUBSCRIBE, EVALSHA): the caller
// learns at once which permission is missing, never a hang, a silent poll or a plain timeout; a
// release whose wake-up is refused says that the lock was released all the same.
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest'
import { claimFence, createLocks, fencedSet, RedisError } from '../../src/index.js'
import type { TestClient } from '../../harness/clients.js'
import { recordAcquires } from '../../harness/telemetry.js'
import { closeQuietly, keysOf, tokenIn, uniquePrefix, until } from '../../harness/util.js'
import { describeRedis, perAdapter } from '../../harness/per-adapter.js'
import { leastPrivilegeUser } from '../../harness/acl.js'

describeRedis('Redis users and their rights', (server) => {
  beforeAll(async () => {
    await server.redis.cli('ACL', 'SETUSER', 'nopub', 'on', '>pw', '~*', '&*', '+@all', '-publish')
    await server.redis.cli('ACL', 'SETUSER', 'nosub', 'on', '>pw', '~*', '&*', '+@all', '-subscribe')
    await server.redis.cli('ACL', 'SETUSER', 'noevalsha', 'on', '>pw', '~*', '&*', '+@all', '-evalsha')
    // The README's least-privilege rule (prefix fencelock-acl:, the user's own data under data:*),
    // plus what the client libraries send when they connect (INFO, CLIENT, HELLO, PING).
    await server.redis.cli(...leastPrivilegeUser('locker', 'fencelock-acl:', ['~data:*', '~{data:*']))
  })

  perAdapter(server, (t) => {
    let nopub: TestClient
    beforeAll(async () => {
      nopub = await t.adapter.connect(server.url.replace('redis://', 'redis://nopub:pw@'))
    })
    afterAll(() => nopub?.quit())
    let acquires: ReturnType<typeof recordAcquires>
    beforeEach(() => {
      acquires = recordAcquires()
    })
    afterEach(() => acquires.stop())

    it('release() releases, then rejects with RedisError naming the missing PUBLISH permission; the lease counts as released', async () => {
      const prefix = uniquePrefix('nopub')
      const holderLocks = createLocks({ redis: nopub.raw, prefix })
      const waiterLocks = createLocks({ redis: t.client.raw, prefix })
      try {
        const lease = await holderLocks.acquire('r', { ttl: 2_000 })
        const waiting = waiterLocks.acquire('r', { wait: 15_000 })
        const channels = async () => ((await t.client.command('PUBSUB', 'CHANNELS', `${keysOf(prefix, 'r').channel}:*`)) as string[]).length
        await until('the waiter is in line and subscribed', async () => (await waiterLocks.inspect('r')).waiters === 1 && (await channels()) === 1)
        const err = await lease.release().then(
          (v) => v,
          (e: unknown) => e,
        )
        expect(err).toBeInstanceOf(RedisError)
        expect((err as Error).message).toMatch(/released/i)
        expect((err as Error).message).toMatch(/PUBLISH/)
        expect(String((err as RedisError).cause)).toMatch(/NOPERM|can't run this command/)
        // Released: the lock is free, or already the waiter's (its look once subscribed may take it
        // at once), never the old holder's.
        expect(tokenIn(await t.client.command('GET', keysOf(prefix, 'r').lock))).not.toBe(lease.token)
        expect(await lease.release()).toBe(false) // already released: nothing more to do
        // The waiter's re-check still gets it, within the holder's ttl (2 s) instead of at once: no
        // release message woke it (the PUBLISH was refused); its own looks found the lock free.
        const next = await waiting
        await next.release()
        const [event] = acquires.of('r').filter((e) => e.token === next.token)
        expect(event?.wakes).not.toContain('release')
      } finally {
        await closeQuietly([holderLocks, waiterLocks])
      }
    }, 20_000)

    it('a waiter whose user may not SUBSCRIBE fails at once with RedisError naming the permission, instead of polling silently', async () => {
      const prefix = uniquePrefix('nosub')
      const nosub = await t.adapter.connect(server.url.replace('redis://', 'redis://nosub:pw@'))
      const holderLocks = createLocks({ redis: t.client.raw, prefix })
      const waiterLocks = createLocks({ redis: nosub.raw, prefix })
      try {
        const lease = await holderLocks.acquire('r', { ttl: 10_000 })
        const err = await waiterLocks.acquire('r', { wait: 8_000 }).then(
          (v) => v,
          (e: unknown) => e,
        )
        expect(err).toBeInstanceOf(RedisError)
        expect((err as Error).message).toMatch(/SUBSCRIBE/)
        expect(String((err as RedisError).cause)).toMatch(/NOPERM|permission/i)
        // At once, not at the end of the wait: the refusal ended it after its first look, before
        // any re-check (a timeout would be a LockTimeoutError).
        const [event] = acquires.of('r').filter((e) => e.outcome !== 'acquired')
        expect(event).toMatchObject({ outcome: 'error', attempts: 1, wakes: [] })
        await lease.release()
      } finally {
        await closeQuietly([holderLocks, waiterLocks])
        await nosub.quit()
      }
    }, 20_000)

    it("a user with only the README's least-privilege rule: mutex with waiting and wake-up, semaphore, read/write, all-or-nothing, inspect and the fenced guards all work", async () => {
      const client = await t.adapter.connect(server.url.replace('redis://', 'redis://locker:pw@'))
      const other = await t.adapter.connect(server.url.replace('redis://', 'redis://locker:pw@'))
      const a = createLocks({ redis: client.raw, prefix: 'fencelock-acl:' })
      const b = createLocks({ redis: other.raw, prefix: 'fencelock-acl:' })
      try {
        const held = await a.acquire(`r-${t.adapter.name}`, { ttl: 10_000 })
        const waiting = b.acquire(`r-${t.adapter.name}`, { wait: 5_000 })
        await until('the waiter is in line', async () => (await a.inspect(`r-${t.adapter.name}`)).waiters === 1)
        await held.release()
        const next = await waiting
        const [event] = acquires.of(`r-${t.adapter.name}`).filter((e) => e.token === next.token)
        expect(event?.wakes, 'woken by the release, not by a re-check').not.toContain('recheck')
        expect(event?.wakes.filter((w) => w !== 'subscribed' && w !== 'release')).toEqual([])
        expect(next.fence).toBeGreaterThan(held.fence)
        expect((await b.inspect(`r-${t.adapter.name}`)).token).toBe(next.token)
        expect(await claimFence(client.raw, `data:${t.adapter.name}`, next.fence)).toBe(true)
        expect(await fencedSet(client.raw, `data:${t.adapter.name}`, 'v', next.fence)).toBe(true)
        await next.release()
        const permit = await a.semaphore(`s-${t.adapter.name}`, { limit: 1 }).acquire()
        expect((await b.semaphore(`s-${t.adapter.name}`, { limit: 1 }).inspect()).held).toBe(1)
        await permit.release()
        await a.readWrite(`rw-${t.adapter.name}`).withWrite(() => {})
        await a.withLocks([`x-${t.adapter.name}`, `y-${t.adapter.name}`], () => {})
      } finally {
        await closeQuietly([a, b])
        await client.quit()
        await other.quit()
      }
    })

    it('a user without EVALSHA gets RedisError naming the command at once, not a timeout', async () => {
      const client = await t.adapter.connect(server.url.replace('redis://', 'redis://noevalsha:pw@'))
      const locks = createLocks({ redis: client.raw, prefix: uniquePrefix('noevalsha') })
      try {
        // The first call of a script is an EVAL (it loads the script); later calls are EVALSHA.
        await (await locks.acquire('r')).release().catch(() => {})
        const err = await locks.acquire('r', { wait: 5_000 }).then(
          (v) => v,
          (e: unknown) => e,
        )
        expect(err).toBeInstanceOf(RedisError)
        expect((err as Error).message).toMatch(/evalsha/i)
        // At once, not a timeout: the refusal (permanent) ended it at its first attempt, no retry.
        const failed = acquires.of('r').filter((e) => e.outcome !== 'acquired')
        expect(failed).toMatchObject([{ outcome: 'error', attempts: 1, wakes: [] }])
      } finally {
        await closeQuietly([locks])
        await client.quit()
      }
    })
  })
})
