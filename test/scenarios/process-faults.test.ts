// Failure scenarios where a lock user's process is paused or killed (DESIGN.md 1 and 11). The
// victims are separate OS processes (harness/workers/worker.ts), so SIGSTOP and SIGKILL are real.
import { afterEach, expect, it } from 'vitest'
import { fencedSet, type Locks } from '../../src/index.js'
import { killAllWorkers, spawnWorker } from '../../harness/spawn.js'
import { closeQuietly, keysOf, pttl, uniquePrefix, until } from '../../harness/util.js'
import { describeRedis, perAdapter } from '../../harness/per-adapter.js'

describeRedis('process faults', (server) => {
  afterEach(killAllWorkers)

  perAdapter(server, (t) => {
    let locks: Locks
    let prefix: string
    afterEach(async () => {
      await closeQuietly([locks])
    })
    const setup = (name: string) => {
      prefix = uniquePrefix(name)
      locks = t.open({ prefix })
    }

    for (const autoExtend of [false, true]) {
      it(`1. holder paused (SIGSTOP) past its ttl${autoExtend ? ' while auto-extending' : ''}: the next holder gets a larger fence; on SIGCONT the old holder's signal aborts and its fenced write is refused`, async () => {
        setup('paused')
        const resource = 'paused'
        const dataKey = `${prefix}data`
        const ttl = 1_000
        const holder = spawnWorker('hold', t.adapter.name, server.url, { prefix, resource, ttl, autoExtend })
        const acquired = await holder.next('acquired')
        holder.signal('SIGSTOP')
        try {
          await until("the paused holder's lock expired in Redis", async () => (await pttl(t.client, keysOf(prefix, resource).lock)) === -2, {
            timeout: ttl + 1_000,
          })
          const next = await locks.acquire(resource, { ttl: 5_000, wait: 0 })
          expect(next.fence).toBeGreaterThan(acquired.fence as number)
          expect(await fencedSet(t.client.raw, dataKey, 'from the new holder', next.fence)).toBe(true)
        } finally {
          holder.signal('SIGCONT')
        }
        // The old holder wakes up and writes at once, as a paused process would.
        holder.send(`write ${dataKey} from-the-paused-holder`)
        const write = await holder.next('write')
        expect(write.ok).toBe(false)
        const lost = await holder.next('lost', 2_000)
        expect(['expired', 'refused']).toContain(lost.reason)
        expect(lost.name).toBe('LockLostError')
        expect(await t.client.command('GET', dataKey)).toBe('from the new holder')
        holder.send('exit')
        expect((await holder.exited).code).toBe(0)
      })
    }

    it('11. holder killed with -9: the lock frees within its ttl and a waiter in another process gets it', async () => {
      setup('kill9-holder')
      const resource = 'kill9-holder'
      const ttl = 1_500
      // Auto-extended: it holds for as long as it lives, however slowly the waiter starts up.
      const holder = spawnWorker('hold', t.adapter.name, server.url, { prefix, resource, ttl, autoExtend: true })
      const held = await holder.next('acquired')
      const waiter = spawnWorker('hold', t.adapter.name, server.url, { prefix, resource, ttl, wait: 10_000 })
      await until('the waiter queued', async () => (await locks.inspect(resource)).waiters === 1, { timeout: 10_000 })
      const killedAt = performance.now()
      holder.signal('SIGKILL')
      // Promise 3 and 11: a crashed holder costs at most one ttl (1.5 s); 10x margin. (The waiter
      // is another process: its telemetry, which would name the re-check, is not ours to read.)
      const got = await waiter.next('acquired', 10 * ttl)
      expect(got.fence).toBeGreaterThan(held.fence as number)
      expect(got.at - killedAt).toBeLessThan(10 * ttl)
      waiter.send('release')
      expect((await waiter.next('released')).ok).toBe(true)
      waiter.send('exit')
      await waiter.exited
    })

    it('11. a dead waiter (killed -9 while queued) is skipped: the next live waiter acquires within the grace of the release', async () => {
      setup('kill9-waiter')
      const resource = 'kill9-waiter'
      const ttl = 1_500
      const grace = 2_000 // createLocks' waiterGrace
      // Auto-extended: held however long the workers take to start (2 cores, shared). A long ttl:
      // a queued waiter keeps its place for the holder's remaining ttl plus the grace, so the dead
      // one is still in line when the live one (a slow start under load) queues behind it; and the
      // live one's own re-check (up to that ttl) comes long after the grace, which tells them apart.
      const holderTtl = 30_000
      const held = await locks.acquire(resource, { ttl: holderTtl, autoExtend: true })
      const dead = spawnWorker('hold', t.adapter.name, server.url, { prefix, resource, ttl, wait: 30_000 })
      await until('the first waiter queued', async () => (await locks.inspect(resource)).waiters === 1, { timeout: 10_000 })
      dead.signal('SIGKILL')
      await dead.exited
      const live = spawnWorker('hold', t.adapter.name, server.url, { prefix, resource, ttl, wait: 30_000 })
      await until('the second waiter queued behind the dead one', async () => (await locks.inspect(resource)).waiters === 2, { timeout: 10_000 })
      // The dead one's connections are gone with it: the one subscriber left is the live waiter.
      const channels = async () => ((await t.client.command('PUBSUB', 'CHANNELS', `${keysOf(prefix, resource).channel}:*`)) as string[]).length
      await until('the live waiter has subscribed', async () => (await channels()) === 1, { timeout: 10_000 })
      const releasedAt = performance.now()
      expect(await held.release()).toBe(true)
      const got = await live.next('acquired', 10 * grace)
      expect(got.fence).toBeGreaterThan(held.fence)
      // The dead head is woken first and dropped after the grace; the live one, on standby, then
      // gets it. Promise 11: a dead waiter costs the grace (2 s); 10x margin, still short of the live
      // one's own re-check at the holder's ttl (30 s), which would mean the standby never came.
      expect(got.at - releasedAt).toBeLessThan(10 * grace)
      expect((await locks.inspect(resource)).waiters).toBe(0)
      live.send('exit')
      await live.exited
    })
  })
})
