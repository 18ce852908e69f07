// The one fence of an all-or-nothing lease, once per client adapter: larger than every earlier
// fence of each of its resources, and stored as each resource's last fence, so a later single lease
// of any of them gets a larger one. A resource whose stored fence is ahead of the server clock
// (a fence from a quorum's write-back, or from before the clock stepped back) shows both: TIME
// alone would hand out a smaller fence.
import { expect, it } from 'vitest'
import { keysOf } from '../../../harness/util.js'
import { describeRedis, perAdapter } from '../../../harness/per-adapter.js'

describeRedis('all-or-nothing fences', (server) => {
  perAdapter(
    server,
    (t) => {
      it("with one resource's fence ahead of the clock: the lease's fence is above it, and later single leases of every resource are above the lease's", async () => {
        const [seconds, micros] = (await t.client.command('TIME')) as [string, string]
        const ahead = Number(seconds) * 1_000_000 + Number(micros) + 1_000_000_000_000 // ~11 days
        await t.client.command('SET', keysOf(t.prefix, 'b').fence, String(ahead), 'PX', 600_000)
        const lease = await t.locks.acquireAll(['a', 'b'])
        expect(lease.fence).toBeGreaterThan(ahead)
        expect(lease.fences).toEqual({ a: lease.fence, b: lease.fence })
        expect(await lease.release()).toBe(true)
        for (const resource of ['a', 'b']) {
          const single = await t.other.acquire(resource)
          expect(single.fence, resource).toBeGreaterThan(lease.fence)
          await single.release()
        }
      })
    },
    { prefix: 'multi-fence' },
  )
})
