// A re-entered handle (reentrant: true) ends only itself, once per client adapter: `await using`
// of a nested acquire, or its release(), leaves the lock with the outermost holder, whose lease
// stays held and unaborted until it ends.
import { expect, it } from 'vitest'
import { describeRedis, perAdapter } from '../../harness/per-adapter.js'

describeRedis('re-entered leases end only themselves', (server) => {
  perAdapter(
    server,
    (t) => {
      it('`await using` and release() of nested handles end those handles; the outermost holder keeps the lock until it ends', async () => {
        const reentrant = t.locks
        const other = t.open()
        await reentrant.withLock('n', async (outer) => {
          const stillHeld = async (after: string) => {
            expect((await other.inspect('n')).token, after).toBe(outer.token)
            expect(outer.held, after).toBe(true)
            expect(outer.signal.aborted, after).toBe(false)
            expect(await other.tryAcquire('n'), after).toBeNull()
          }
          {
            await using inner = await reentrant.acquire('n')
            expect(inner.token).toBe(outer.token)
          }
          await stillHeld('after `await using` of a nested acquire')
          const viaTry = (await reentrant.tryAcquire('n'))!
          expect(viaTry.token).toBe(outer.token)
          await viaTry[Symbol.asyncDispose]()
          expect(viaTry.held).toBe(false)
          await stillHeld('after disposing a nested tryAcquire')
          const released = await reentrant.acquire('n')
          expect(await released.release()).toBe(true)
          expect(released.held).toBe(false)
          await stillHeld('after release() of a nested acquire')
        })
        expect((await other.inspect('n')).held).toBe(false)
      })
    },
    { prefix: 'reenter-nested', locks: { reentrant: true } },
  )
})
