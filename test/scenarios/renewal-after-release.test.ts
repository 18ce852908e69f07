// DESIGN.md 9, the client's side: once a lease is released, not one more renewal of it reaches
// Redis, whatever was going on when it was released (nothing, or an extend in flight whose reply
// comes after the release). The script side (an extend that arrives after the release extends
// nothing) is the extend script's token check, tested in test/lua. Counted on the server
// (INFO commandstats), so a renewal timer left armed, or one armed again by a late reply, shows.
import { expect, it } from 'vitest'
import { scriptCallsOver } from '../../harness/commandstats.js'
import { describeRedis, perAdapter } from '../../harness/per-adapter.js'

const ttl = 300 // renewals every 100 ms: three periods fit in the count's window
const window = 3.5 * (ttl / 3)

describeRedis('9. renewal racing release (client side)', (server) => {
  perAdapter(
    server,
    (t) => {
      it('9. an auto-extended lease released before its first renewal sends no renewal afterwards', async () => {
        const lease = await t.locks.acquire('quiet', { ttl, autoExtend: true })
        expect(await lease.release()).toBe(true)
        const { calls } = await scriptCallsOver(server.redis, window)
        expect(calls).toBe(0)
        expect(lease.signal.aborted).toBe(false)
      })

      it('9. released while its own extend is in flight: the late reply arms no renewal, and the lease is not reported lost', async () => {
        const lease = await t.locks.acquire('in-flight', { ttl, autoExtend: true })
        const extending = lease.extend()
        const releasing = lease.release()
        const [extended, released] = await Promise.allSettled([extending, releasing])
        expect(released).toEqual({ status: 'fulfilled', value: true })
        // The extend went out first on the connection and was granted; its reply is read after the release.
        expect(extended.status).toBe('fulfilled')
        const { calls } = await scriptCallsOver(server.redis, window)
        expect(calls).toBe(0)
        expect(lease.signal.aborted).toBe(false)
        expect(await t.locks.inspect('in-flight')).toMatchObject({ held: false })
      })

      it('9. released around its renewals at many moments: after each release, no renewal of any of them is sent', async () => {
        const leases = []
        for (let i = 0; i < 20; i++) leases.push(await t.locks.acquire(`many:${i}`, { ttl, autoExtend: true }))
        // Release them one by one across a renewal period, so some go while a renewal is due or in flight.
        for (const lease of leases) {
          await new Promise((resolve) => setTimeout(resolve, ttl / 3 / leases.length))
          await lease.release()
        }
        // A renewal already in flight at a release has landed once a command sent after it on the
        // same connection is answered (replies come in order); from here on, nothing is sent.
        expect(await t.client.command('PING')).toBe('PONG')
        const { calls } = await scriptCallsOver(server.redis, window)
        expect(calls).toBe(0)
        expect(leases.filter((l) => l.signal.aborted).map((l) => l.resource)).toEqual([])
      })
    },
    { prefix: 'renew-after-release' },
  )
})
