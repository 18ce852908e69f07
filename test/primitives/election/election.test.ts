// Leader election on one Redis, once per client adapter: one leader at a time, FIFO handover on
// resign with a larger term, proclaim and observe in order, an observer that never goes backwards,
// the cost of observing a quiet election, maxHold, and typed errors for bad input.
import { beforeAll, expect, it, onTestFinished } from 'vitest'
import { createLocks, InvalidArgumentError, LockLostError, LockTimeoutError, type Leader, type Locks } from '../../../src/index.js'
import { callsOfAll, scriptCalls } from '../../../harness/commandstats.js'
import { record, recordAcquires } from '../../../harness/telemetry.js'
import { nameMaker, sleep, uniquePrefix, until } from '../../../harness/util.js'
import { describeRedis, perAdapter } from '../../../harness/per-adapter.js'

/** Collects what an observer yields until it is stopped. */
function watch(locks: Locks, name: string) {
  const seen: (Leader | null)[] = []
  const stop = new AbortController()
  const done = (async () => {
    for await (const leader of locks.election(name).observe({ signal: stop.signal })) seen.push(leader)
  })()
  return { seen, stop: async () => (stop.abort(), await done) }
}

describeRedis('election', (server) => {
  perAdapter(
    server,
    (t) => {
      let a: Locks
      let b: Locks
      let c: Locks
      beforeAll(() => {
        a = t.locks
        b = t.other
        c = t.open()
      })
      const name = nameMaker()

      it('one leader at a time; resign hands over to the first in line at once, with a larger term', async () => {
        const e = name('handover')
        const acquires = recordAcquires()
        onTestFinished(() => acquires.stop())
        const first = await a.election(e, { ttl: 5_000 }).campaign('a')
        expect(await a.election(e).leader()).toMatchObject({ value: 'a', fence: first.fence, version: 0 })
        // A candidate's first attempt puts it in line, and a first wait looks once more when its
        // wake-up channel is active: two script calls each, then only a resignation lets it in.
        await server.redis.cli('CONFIG', 'RESETSTAT')
        const second = b.election(e, { ttl: 5_000 }).campaign('b', { wait: 10_000 })
        await until('b is in line and listening', async () => (await scriptCalls(server.redis)) >= 2, { timeout: 3_000 })
        const third = c.election(e, { ttl: 5_000 }).campaign('c', { wait: 10_000 })
        await until('c is in line behind b and listening', async () => (await scriptCalls(server.redis)) >= 4, { timeout: 3_000 })
        expect((await a.election(e).inspect()).candidates).toBe(2)
        await expect(a.election(e).campaign('x', { wait: 0 })).rejects.toBeInstanceOf(LockTimeoutError)
        expect(await first.resign()).toBe(true)
        const next = await second
        expect(next.value).toBe('b')
        expect(next.fence).toBeGreaterThan(first.fence)
        // At once: b went in on an attempt that the resignation's message sent, not on a re-check at a's 5 s ttl.
        const wakes = acquires.events.find((ev) => ev.kind === 'election' && ev.token === next.token)!.wakes
        expect(wakes.at(-1)).toBe('release')
        expect(wakes).not.toContain('recheck')
        expect(await a.election(e).leader()).toMatchObject({ value: 'b', fence: next.fence })
        await next.resign()
        const last = await third
        expect(last.fence).toBeGreaterThan(next.fence)
        await last.resign()
        expect(await a.election(e).leader()).toBeNull()
      })

      it('observe yields the current leader, then every proclaim, term and vacancy in order', async () => {
        const e = name('observe')
        const term = await a.election(e, { ttl: 5_000 }).campaign('v0')
        const o = watch(b, e)
        await until('the first state', () => o.seen.length === 1)
        for (const v of ['v1', 'v2', 'v3']) await term.proclaim(v)
        expect(term.value).toBe('v3')
        await term.resign()
        const next = await c.election(e, { ttl: 5_000 }).campaign('w0')
        await until('the new term', () => o.seen.length === 6)
        await next.resign()
        await until('the vacancy', () => o.seen.length === 7)
        await o.stop()
        expect(o.seen.map((l) => l && [l.value, l.version])).toEqual([['v0', 0], ['v1', 1], ['v2', 2], ['v3', 3], null, ['w0', 0], null])
        const fences = o.seen.flatMap((l) => (l ? [l.fence] : []))
        expect(fences.slice(0, 4).every((f) => f === term.fence)).toBe(true)
        expect(fences[4]).toBeGreaterThan(term.fence)
      })

      it('a proclaim of a term that lost the election rejects with LockLostError', async () => {
        const e = name('lost')
        const term = await a.election(e, { ttl: 5_000 }).campaign('a')
        await term.resign()
        await expect(term.proclaim('late')).rejects.toBeInstanceOf(LockLostError)
      })

      it('withLeadership runs fn as the leader and resigns after', async () => {
        const e = name('with')
        const fence = await a.election(e).withLeadership('w', async (term) => {
          expect(await b.election(e).leader()).toMatchObject({ value: 'w', fence: term.fence })
          return term.fence
        })
        expect(fence).toBeGreaterThan(0)
        expect(await b.election(e).leader()).toBeNull()
      })

      it('an observer of a quiet election sends a handful of commands over seconds, and ends when the instance closes', async () => {
        const e = name('quiet')
        const prefix = uniquePrefix('quiet')
        const leader = createLocks({ redis: t.client.raw, prefix })
        const observer = createLocks({ redis: t.client.raw, prefix })
        const term = await leader.election(e, { ttl: 1_000 }).campaign('q')
        const seen: (Leader | null)[] = []
        const done = (async () => {
          for await (const l of observer.election(e).observe()) seen.push(l)
        })()
        await until('the first state', () => seen.length === 1)
        const before = await callsOfAll(server.redis, ['evalsha', 'eval'])
        await sleep(3_000)
        const after = await callsOfAll(server.redis, ['evalsha', 'eval'])
        const scripts = after[0]! + after[1]! - before[0]! - before[1]!
        if (process.env.ELECTION_COST) console.log(`script calls over 3 s: ${scripts}`)
        // The leader renews every ttl/3 (about 9 renewals in 3 s); the observer reads once per lapse of the ttl it last saw.
        const renewals = 9
        expect(scripts - renewals).toBeLessThanOrEqual(6)
        expect(seen).toHaveLength(1)
        await observer.close()
        await done
        await term.resign()
        await leader.close()
      })

      it('maxHold: auto-extension stops after it, the term ends and its signal aborts', async () => {
        const e = name('maxhold')
        const extensions = record('fencelock:extend')
        onTestFinished(() => extensions.stop())
        const term = await a.election(e, { ttl: 300 }).campaign('m', { maxHold: 400 })
        const lost = new Promise<unknown>((resolve) => term.signal.addEventListener('abort', () => resolve(term.signal.reason)))
        const started = performance.now()
        const reason = await lost
        expect(reason).toBeInstanceOf(LockLostError)
        // Not extended any more, it ran out at its deadline (not refused, not unreachable).
        expect((reason as LockLostError).reason).toBe('expired')
        // The promise (a lower bound): auto-extended until maxHold, so not lost before it.
        expect(performance.now() - started).toBeGreaterThan(400)
        // And the renewals stopped at maxHold: each goes out a third of the ttl (100 ms) or more
        // after the one before, and none falls due after maxHold (400 ms), so at most 3 went out.
        const renewals = extensions.events.filter((ev) => ev.token === term.token)
        expect(renewals.length).toBeGreaterThan(0)
        expect(renewals.length).toBeLessThanOrEqual(3)
        const lease = await a.acquire(name('lock'), { ttl: 300, autoExtend: true, maxHold: 200 })
        await new Promise((resolve) => lease.signal.addEventListener('abort', resolve))
        await expect(async () => createLocks({ redis: t.client.raw, maxHold: -1 })).rejects.toThrow(/maxHold.*-1/)
      })

      it('bad input gets a typed error naming the value', () => {
        expect(() => a.election('')).toThrow(InvalidArgumentError)
        expect(() => a.election('x', { ttl: -5 })).toThrow(/ttl.*-5/)
        return Promise.all([
          expect(a.election('x').campaign(42 as unknown as string)).rejects.toThrow(/value.*42/),
          expect(a.election('x').campaign('v', { maxHold: 0 })).rejects.toThrow(/maxHold.*0/),
        ])
      })
    },
    { prefix: 'elect' },
  )
})
