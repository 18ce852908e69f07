// Event-driven waiting under faults: a release must wake the next waiter even when the wake-up
// lands at an awkward moment (mid-attempt, while the pub/sub connection is down), and a waiter
// that gives up must not leave a ghost place in the fair queue.
import { afterEach, beforeEach, expect, it } from 'vitest'
import { createLocks, LockTimeoutError } from '../../src/index.js'
import { proxiedWaiter } from '../../harness/conn-proxy.js'
import { closeQuietly, keysOf, sleep, uniquePrefix, untilFree, until } from '../../harness/util.js'
import { describeRedis, perAdapter, useFaultProxy } from '../../harness/per-adapter.js'
import { handOver } from '../../harness/leases.js'
import { scriptCalls } from '../../harness/commandstats.js'
import { recordAcquires } from '../../harness/telemetry.js'

/**
 * Why the waiter that got `resource` last (the one that waited) sent its attempts after waiting,
 * with 'subscribed' left out: a first wait looks once more when its wake-up channel becomes active.
 */
const wakesOfWaiter = (acquires: ReturnType<typeof recordAcquires>, resource: string) =>
  (
    acquires
      .of(resource)
      .filter((e) => e.outcome === 'acquired')
      .at(-1)?.wakes ?? []
  ).filter((w) => w !== 'subscribed')

describeRedis('wake-ups', (server) => {
  const faults = useFaultProxy(server)

  perAdapter(server, (t) => {
    let acquires: ReturnType<typeof recordAcquires>
    beforeEach(() => {
      acquires = recordAcquires()
    })
    afterEach(() => acquires.stop())
    /**
     * Until Redis has run `n` script calls since the last CONFIG RESETSTAT: the waiter's attempts,
     * where nothing else runs a script meanwhile (the conditions below use plain commands).
     */
    const untilScriptCalls = (what: string, n: number) => until(what, async () => (await scriptCalls(server.redis)) >= n)
    // Each process listens on its own channel under the resource's (`<channel>:<instance>`).
    const subscribers = async (channel: string) => {
      const channels = (await t.client.command('PUBSUB', 'CHANNELS', `${channel}:*`)) as string[]
      if (channels.length === 0) return 0
      const reply = (await t.client.command('PUBSUB', 'NUMSUB', ...channels)) as (number | string)[]
      return reply.filter((_, i) => i % 2 === 1).reduce<number>((sum, n) => sum + Number(n), 0)
    }

    it("a release published while the waiter's attempt is still in flight is not lost (the waiter does not sleep a whole ttl)", async () => {
      const prefix = uniquePrefix('midattempt')
      const resource = 'mid-attempt'
      // Connection 0 is the waiter's command connection: its replies crawl. Its pub/sub
      // connection (opened later, through the same proxy) is not slowed down.
      const { holderLocks, waiterLocks, end } = await proxiedWaiter(t.adapter, t.client, server.redis, prefix, (proxy) => proxy.delayReplies(0, 300))
      try {
        const held = await holderLocks.acquire(resource, { ttl: 5_000 })
        await server.redis.cli('CONFIG', 'RESETSTAT')
        const waiting = waiterLocks.acquire(resource, { ttl: 5_000, wait: 15_000 })
        // Once subscribed, the waiter looks again: that attempt runs in Redis at once, its reply
        // takes 300 ms. Release in between: the wake-up arrives while the attempt is in flight.
        await until('the waiter subscribed', async () => (await subscribers(keysOf(prefix, resource).channel)) === 1, { timeout: 5_000, every: 2 })
        await untilScriptCalls('the look after subscribing ran in Redis (its reply is on its way)', 2)
        await handOver(held, waiting)
        // Woken by the release's message, kept while the attempt was in flight; without it the
        // waiter would sleep until the re-check timer (the holder's remaining ttl, ~4.5 s).
        expect(wakesOfWaiter(acquires, resource)).toEqual(['release'])
      } finally {
        await end()
      }
    })

    it("a subscription that never completes costs at most the re-check delay (the holder's ttl), not the whole wait", async () => {
      const prefix = uniquePrefix('deaf')
      const resource = 'deaf'
      // Connection 1 is the waiter's pub/sub connection: nothing it asks for is ever answered.
      const { holderLocks, waiterLocks, end } = await proxiedWaiter(t.adapter, t.client, server.redis, prefix, (proxy) => proxy.delayReplies(1, 60_000))
      try {
        const ttl = 1_000
        const held = await holderLocks.acquire(resource, { ttl }) // not extended: it expires
        const lease = await waiterLocks.acquire(resource, { ttl, wait: 8_000 })
        expect(lease.fence).toBeGreaterThan(held.fence)
        await lease.release()
        // One look, sent by the re-check timer (bounded by the holder's ttl) while the SUBSCRIBE was
        // still unanswered: not held until the subscription or the deadline (that would time out).
        const [event] = acquires.of(resource).filter((e) => e.outcome === 'acquired' && e.token === lease.token)
        expect(event?.wakes.length).toBeGreaterThan(0)
        expect(event?.wakes.filter((w) => w !== 'recheck')).toEqual([])
      } finally {
        await end()
      }
    })

    it('the pub/sub connection is reset while it opens: the subscriber recovers (a release still wakes the waiter promptly) and close() does not hang', async () => {
      const prefix = uniquePrefix('reset-open')
      const resource = 'reset-open'
      // the waiter's first pub/sub connection dies as it opens
      const { holderLocks, waiterLocks, end } = await proxiedWaiter(t.adapter, t.client, server.redis, prefix, (proxy) => proxy.resetOnAccept(1))
      let wakes: string[] = ['(not acquired)']
      let closed = ''
      try {
        const ttl = 5_000
        const held = await holderLocks.acquire(resource, { ttl })
        await server.redis.cli('CONFIG', 'RESETSTAT')
        const waiting = waiterLocks.acquire(resource, { ttl, wait: 10_000 })
        waiting.catch(() => {})
        const k = keysOf(prefix, resource)
        await until('the waiter queued', async () => Number(await t.client.command('ZCARD', k.queue)) === 1)
        await until('the subscriber reconnected and subscribed', async () => (await subscribers(k.channel)) === 1)
        await untilScriptCalls('the look after subscribing ran: the waiter sleeps until its re-check', 2)
        expect(await held.release()).toBe(true)
        const lease = await waiting
        await lease.release()
        wakes = wakesOfWaiter(acquires, resource)
      } finally {
        let settled = false
        void Promise.all([waiterLocks.close(), holderLocks.close()]).then(() => (settled = true))
        closed = await until('close() settled', () => settled, { timeout: 2_000 }).then(
          () => 'closed',
          () => 'close() still pending after 2 s',
        )
        await end()
      }
      // Woken by the release (the recovered subscription heard it), not by the re-check a ttl later.
      expect.soft(wakes).toContain('release')
      expect.soft(wakes).not.toContain('recheck')
      expect.soft(closed).toBe('closed')
    })

    for (const kill of ['CLIENT KILL TYPE pubsub', 'fault proxy resetAll'] as const) {
      it(`missed pub/sub wake-up (${kill}): the waiter still acquires within one ttl of the release, and promptly after the reconnect`, async () => {
        const prefix = uniquePrefix('resync')
        const resource = 'resync'
        const ttl = 6_000
        const viaProxy = kill === 'fault proxy resetAll'
        const waiterClient = await t.adapter.connect(viaProxy ? faults.url : server.url)
        const holderLocks = createLocks({ redis: t.client.raw, prefix })
        const waiterLocks = createLocks({ redis: waiterClient.raw, prefix })
        try {
          const held = await holderLocks.acquire(resource, { ttl })
          await server.redis.cli('CONFIG', 'RESETSTAT')
          const waiting = waiterLocks.acquire(resource, { ttl, wait: 15_000 })
          const k = keysOf(prefix, resource)
          await until(
            'the waiter queued and subscribed',
            async () => Number(await t.client.command('ZCARD', k.queue)) === 1 && (await subscribers(k.channel)) === 1,
          )
          await untilScriptCalls('the look after subscribing ran: the waiter sleeps until its re-check', 2)
          if (viaProxy) faults.resetAll()
          else await server.redis.cli('CLIENT', 'KILL', 'TYPE', 'pubsub')
          // Released while nobody listens: the PUBLISH reaches no one.
          await handOver(held, waiting)
          // The reconnect re-checks at once (wait.ts: onResync) instead of waiting for the timer
          // (the holder's remaining ttl, ~6 s): within one ttl of the release, and promptly. (A
          // client that is subscribed again before the PUBLISH, as GLIDE often is, hears the
          // release itself.)
          const wakes = wakesOfWaiter(acquires, resource)
          expect(['resync', 'release']).toContain(wakes.at(-1))
          expect(wakes).not.toContain('recheck')
        } finally {
          await closeQuietly([waiterLocks, holderLocks])
          await waiterClient.disconnect()
        }
      })
    }

    it('a wait that begins while the pub/sub connection reconnects gets the lock: the reconnect is no refusal of SUBSCRIBE', async () => {
      // node-redis 5 on Redis 7.0 (no CLIENT SETINFO): its reconnect put the handshake's CLIENT
      // SETINFO ahead of the SUBSCRIBE asked for meanwhile, whose promise then got SETINFO's error,
      // and the wait failed at once with "Redis refused the SUBSCRIBE" (found when a test after a
      // connection reset shared its client).
      const prefix = uniquePrefix('resubscribe')
      const waiterClient = await t.adapter.connect(faults.url)
      const holderLocks = createLocks({ redis: t.client.raw, prefix })
      const waiterLocks = createLocks({ redis: waiterClient.raw, prefix })
      try {
        // A first wait opens the waiter's pub/sub connection.
        const first = await holderLocks.acquire('first', { ttl: 5_000 })
        const waitingFirst = waiterLocks.acquire('first', { ttl: 5_000, wait: 10_000 })
        await until('the first waiter subscribed', async () => (await subscribers(keysOf(prefix, 'first').channel)) === 1)
        await handOver(first, waitingFirst)
        const held = await holderLocks.acquire('second', { ttl: 5_000 })
        faults.resetAll()
        const waiting = waiterLocks.acquire('second', { ttl: 5_000, wait: 10_000 })
        waiting.catch(() => {})
        const second = keysOf(prefix, 'second')
        await until('the waiter queued', async () => Number(await t.client.command('ZCARD', second.queue)) === 1)
        // ioredis and GLIDE: woken by the release once subscribed again. node-redis: that reconnect
        // also loses the SUBSCRIBE itself (its promise resolves, the channel is not subscribed on
        // the server), so the waiter finds the lock free at its re-check, the holder's remaining
        // ttl (open): the wait still gets the lock, by the timer that bounds a lost wake-up.
        const nodeRedis = t.adapter.name === 'node-redis'
        if (!nodeRedis) await until('the waiter subscribed again', async () => (await subscribers(second.channel)) === 1)
        await handOver(held, waiting)
        // Promptly (by the release, or by its own look once subscribed), not by the re-check timer.
        if (!nodeRedis) expect(wakesOfWaiter(acquires, 'second')).not.toContain('recheck')
      } finally {
        await closeQuietly([waiterLocks, holderLocks])
        await waiterClient.disconnect()
      }
    })

    it('a waiter that gives up (abort or deadline) just as the lock is handed to it leaves nothing behind: no orphaned lock, no queue place', async () => {
      const prefix = uniquePrefix('giveup-race')
      const other = await t.adapter.connect(server.url)
      const holderLocks = createLocks({ redis: t.client.raw, prefix })
      const waiterLocks = createLocks({ redis: other.raw, prefix })
      const problems: string[] = []
      let granted = 0
      try {
        for (let i = 0; i < 40; i++) {
          const resource = `giveup:${i}`
          const byAbort = i % 2 === 0
          const held = await holderLocks.acquire(resource, { ttl: 5_000 })
          const controller = new AbortController()
          const wait = byAbort ? 10_000 : 60
          const waiting = waiterLocks.acquire(resource, { ttl: 5_000, wait, signal: controller.signal }).then(
            (lease) => lease,
            (err: unknown) => err as Error,
          )
          await sleep(byAbort ? 30 : wait - 8)
          // Release and give up within a few ms of each other, in either order.
          const releaseIn = Math.random() * 8
          const giveUpIn = Math.random() * 8
          setTimeout(() => void held.release(), releaseIn)
          if (byAbort) setTimeout(() => controller.abort(), giveUpIn)
          const outcome = await waiting
          // With a 60 ms wait, a loaded machine can leave an attempt unanswered until the deadline:
          // the wait then ends with the silence (RedisError, by design: not contention). What this
          // test is about stays checked below: nothing left behind.
          const silent = !byAbort && outcome instanceof Error && outcome.name === 'RedisError' && /No reply from Redis within/.test(outcome.message)
          if (outcome instanceof Error) {
            if (!['LockAbortedError', 'LockTimeoutError'].includes(outcome.name) && !silent) problems.push(`#${i}: ${outcome.name}: ${outcome.message}`)
          } else {
            granted++
            if (!(await outcome.release())) problems.push(`#${i}: the granted lease could not be released`)
          }
          await untilFree(holderLocks, resource, 1_000).catch(async () =>
            problems.push(`#${i} (${byAbort ? 'abort' : 'deadline'}): left ${JSON.stringify(await holderLocks.inspect(resource))}`),
          )
        }
        expect(problems).toEqual([])
        expect(granted).toBeLessThan(40) // the race was run: some waiters did give up
      } finally {
        await closeQuietly([waiterLocks, holderLocks])
        await other.quit()
      }
    })

    it('waiters of one process that time out together leave the fair queue: no ghost place delays the next waiter', async () => {
      const prefix = uniquePrefix('ghost')
      const resource = 'ghost'
      const other = await t.adapter.connect(server.url)
      const holderLocks = createLocks({ redis: t.client.raw, prefix })
      const impatient = createLocks({ redis: other.raw, prefix })
      const patient = createLocks({ redis: other.raw, prefix: prefix })
      try {
        const held = await holderLocks.acquire(resource, { ttl: 3_000 })
        // Two acquires started in the same tick both take the fast path and both join the queue.
        const outcomes = await Promise.allSettled([impatient.acquire(resource, { wait: 300 }), impatient.acquire(resource, { wait: 300 })])
        for (const outcome of outcomes) {
          expect(outcome.status).toBe('rejected')
          expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(LockTimeoutError)
        }
        await until('both impatient waiters left the queue', async () => (await holderLocks.inspect(resource)).waiters === 0, { timeout: 1_000 }).catch(
          async (err: unknown) => {
            const queue = await t.client.command('ZRANGE', keysOf(prefix, resource).queue, 0, -1)
            throw new Error(`${(err as Error).message}; queue still holds ${JSON.stringify(queue)}`)
          },
        )
        const waiting = patient.acquire(resource, { wait: 10_000 })
        await until('the patient waiter queued', async () => (await holderLocks.inspect(resource)).waiters === 1)
        await held.release()
        const lease = await waiting
        await lease.release()
        // A ghost place ahead would take the release's wake-up: the patient waiter would then look
        // again on standby (after the grace) or at its re-check (the holder's ttl), not at once.
        const wakes = wakesOfWaiter(acquires, resource)
        expect(wakes.filter((w) => w !== 'release')).toEqual([])
      } finally {
        await closeQuietly([impatient, patient, holderLocks])
        await other.quit()
      }
    })
  })
})
