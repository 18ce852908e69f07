// An AbortSignal is honoured at every stage of an acquire: before the call, while the first
// attempt is in flight (lock free or held), and while waiting. An aborted acquire rejects promptly
// with LockAbortedError, never returns a lease, and gives back whatever Redis granted it.
import { expect, it } from 'vitest'
import { createLocks, LockAbortedError } from '../../src/index.js'
import { proxiedWaiter } from '../../harness/conn-proxy.js'
import { closeQuietly, keysOf, sleep, uniquePrefix, until } from '../../harness/util.js'
import { describeRedis, perAdapter } from '../../harness/per-adapter.js'

describeRedis('abort', (server) => {
  perAdapter(server, (t) => {
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
        const controller = new AbortController()
        const outcome = locks.acquire(resource, { ttl: 5_000, wait, signal: controller.signal }).then(
          (lease) => ({ lease }),
          (error: unknown) => ({ error, at: performance.now() }),
        )
        await sleep(40) // the attempt is in Redis; its reply is 260 ms away
        const abortedAt = performance.now()
        controller.abort(new Error('stop'))
        const result = await outcome
        expect('lease' in result ? `got a lease with fence ${result.lease.fence}` : 'rejected').toBe('rejected')
        if (!('error' in result)) return
        expect(result.error).toBeInstanceOf(LockAbortedError)
        expect((result.error as LockAbortedError).cause).toEqual(new Error('stop'))
        // Promptly: not when the reply comes (260 ms), nor at the end of the wait.
        expect(result.at - abortedAt, 'ms from the abort to the rejection').toBeLessThan(150)
        // Whatever the late reply granted is given back: the lock is free (or the holder's), and the
        // aborted waiter keeps no place in the fair queue.
        await until('the late grant is given back', async () => (await t.client.command('GET', keysOf(prefix, resource).lock)) === (holder?.token ?? null), {
          timeout: 3_000,
        })
        await until('no queue place is left', async () => Number(await t.client.command('ZCARD', keysOf(prefix, resource).queue)) === 0, { timeout: 3_000 })
        if (holder) {
          const next = holderLocks.acquire(resource, { ttl: 5_000, wait: 3_000 })
          const releasedAt = performance.now()
          await holder.release()
          const lease = await next
          expect(performance.now() - releasedAt, 'a ghost queue place would delay the next waiter').toBeLessThan(1_000)
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
        const abortedAt = performance.now()
        controller.abort()
        const err = await waiting
        expect(err).toBeInstanceOf(LockAbortedError)
        expect(performance.now() - abortedAt).toBeLessThan(100)
        await until('the queue place is freed', async () => Number(await t.client.command('ZCARD', keysOf(prefix, resource).queue)) === 0, { timeout: 3_000 })
        await holder.release()
      } finally {
        await closeQuietly([locks, holderLocks])
      }
    })
  })
})
