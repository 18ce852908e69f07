// An AbortSignal is honoured at every stage of an acquire: before the call, while the first
// attempt is in flight (lock free or held), and while waiting. An aborted acquire rejects promptly
// with LockAbortedError, never returns a lease, and gives back whatever Redis granted it.
import { afterEach, beforeEach, expect, it } from 'vitest'
import { createLocks, LockAbortedError } from '../../src/index.js'
import { proxiedWaiter } from '../../harness/conn-proxy.js'
import { scriptCalls } from '../../harness/commandstats.js'
import { recordAcquires } from '../../harness/telemetry.js'
import { closeQuietly, keysOf, tokenIn, uniquePrefix, until } from '../../harness/util.js'
import { describeRedis, perAdapter } from '../../harness/per-adapter.js'

/** Whether `promise` has settled, read after the current turn of the event loop (its microtasks) is over, before any I/O. */
const settledThisTurn = async (promise: Promise<unknown>): Promise<boolean> => {
  let settled = false
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  )
  await new Promise((resolve) => setImmediate(resolve))
  return settled
}

describeRedis('abort', (server) => {
  perAdapter(server, (t) => {
    let acquires: ReturnType<typeof recordAcquires>
    beforeEach(() => {
      acquires = recordAcquires()
    })
    afterEach(() => acquires.stop())

    it('an already-aborted signal rejects with LockAbortedError (its reason as cause), before any Redis call', async () => {
      const prefix = uniquePrefix('pre-aborted')
      const locks = createLocks({ redis: t.client.raw, prefix })
      try {
        const reason = new Error('caller gave up')
        const err = await locks.acquire('r', { signal: AbortSignal.abort(reason) }).catch((e: unknown) => e)
        expect(err).toBeInstanceOf(LockAbortedError)
        expect((err as LockAbortedError).code).toBe('LOCK_ABORTED')
        expect((err as LockAbortedError).cause).toBe(reason)
        // A signal aborted without a reason: still typed (the DOMException becomes the cause).
        const bare = await locks.acquire('r', { signal: AbortSignal.abort() }).catch((e: unknown) => e)
        expect(bare).toBeInstanceOf(LockAbortedError)
        expect(await t.client.command('EXISTS', keysOf(prefix, 'r').lock)).toBe(0)
      } finally {
        await closeQuietly([locks])
      }
    })

    it.each([
      ['free', 5_000],
      ['held', 5_000],
      ['held', Infinity],
    ] as const)('an abort while the first attempt is in flight (lock %s, wait %s) rejects at once and leaves nothing behind', async (state, wait) => {
      const prefix = uniquePrefix(`abort-inflight-${state}`)
      const resource = 'in-flight'
      // The waiter's command replies (connection 0 behind the proxy) take 300 ms.
      const { holderLocks, waiterLocks: locks, end } = await proxiedWaiter(t.adapter, t.client, server.redis, prefix, (proxy) => proxy.delayReplies(0, 300))
      try {
        const holder = state === 'held' ? await holderLocks.acquire(resource, { ttl: 10_000 }) : undefined
        await server.redis.cli('CONFIG', 'RESETSTAT')
        const controller = new AbortController()
        const outcome = locks.acquire(resource, { ttl: 5_000, wait, signal: controller.signal }).then(
          (lease) => ({ lease }),
          (error: unknown) => ({ error }),
        )
        await until('the attempt ran in Redis (its reply is ~300 ms away)', async () => (await scriptCalls(server.redis)) >= 1, { every: 2 })
        controller.abort(new Error('stop'))
        // Promptly: settled in the same turn of the event loop as the abort, before any reply could
        // be read (not when the attempt's reply comes, nor at the end of the wait).
        expect(await settledThisTurn(outcome), 'settled before the next turn of the event loop').toBe(true)
        const result = await outcome
        expect('lease' in result ? `got a lease with fence ${result.lease.fence}` : 'rejected').toBe('rejected')
        if (!('error' in result)) return
        expect(result.error).toBeInstanceOf(LockAbortedError)
        expect((result.error as LockAbortedError).cause).toEqual(new Error('stop'))
        // Whatever the late reply granted is given back: the lock is free (or the holder's), and the
        // aborted waiter keeps no place in the fair queue.
        await until(
          'the late grant is given back',
          async () => tokenIn(await t.client.command('GET', keysOf(prefix, resource).lock)) === (holder?.token ?? null),
          {
            timeout: 3_000,
          },
        )
        await until('no queue place is left', async () => Number(await t.client.command('ZCARD', keysOf(prefix, resource).queue)) === 0, { timeout: 3_000 })
        if (holder) {
          const next = holderLocks.acquire(resource, { ttl: 5_000, wait: 3_000 })
          await holder.release()
          const lease = await next
          // A ghost queue place ahead would take the release's wake-up, and the next waiter would
          // look again only on standby or at its re-check: woken by the release (or acquired on its
          // first looks) instead.
          const [event] = acquires.of(resource).filter((e) => e.token === lease.token)
          expect(event?.wakes.filter((w) => w !== 'subscribed' && w !== 'release')).toEqual([])
          await lease.release()
        }
      } finally {
        await end()
      }
    })

    it('an abort while queued behind a holder rejects within milliseconds and frees the queue place', async () => {
      const prefix = uniquePrefix('abort-queued')
      const resource = 'queued'
      const holderLocks = createLocks({ redis: t.client.raw, prefix })
      const locks = createLocks({ redis: t.client.raw, prefix })
      try {
        const holder = await holderLocks.acquire(resource, { ttl: 10_000 })
        const controller = new AbortController()
        const waiting = locks.acquire(resource, { wait: Infinity, signal: controller.signal }).catch((e: unknown) => e)
        await until('the waiter queued', async () => Number(await t.client.command('ZCARD', keysOf(prefix, resource).queue)) === 1, { timeout: 3_000 })
        controller.abort()
        // Within milliseconds: settled in the same turn of the event loop as the abort, no round trip.
        expect(await settledThisTurn(waiting), 'settled before the next turn of the event loop').toBe(true)
        const err = await waiting
        expect(err).toBeInstanceOf(LockAbortedError)
        await until('the queue place is freed', async () => Number(await t.client.command('ZCARD', keysOf(prefix, resource).queue)) === 0, { timeout: 3_000 })
        await holder.release()
      } finally {
        await closeQuietly([locks, holderLocks])
      }
    })
  })
})
