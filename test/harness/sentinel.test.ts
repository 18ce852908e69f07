// The Sentinel group under the failover tests and verify's failover mode: the failovers the harness
// causes must be the only ones. A Sentinel that counted a just-promoted primary down would start a
// second failover, and it could promote the old primary back (restarted empty, not yet synced):
// a lost lock no library can keep, blamed on the lock under test.
import { describe, expect, it } from 'vitest'
import { requireRedisOrSkip } from '../../harness/redis-server.js'
import { DOWN_AFTER_MS, startSentinelGroup } from '../../harness/sentinel.js'
import { sleep } from '../../harness/util.js'
const FAILOVERS = 3

describe.skipIf(!requireRedisOrSkip())('Sentinel group harness', () => {
  it(`fails over ${FAILOVERS} times (kill -9, promotion, restart, rejoin) and no more: no Sentinel counts a just-promoted primary down`, async () => {
    const group = await startSentinelGroup()
    try {
      let promoted = await group.primary()
      for (let i = 0; i < FAILOVERS; i++) {
        const old = promoted
        await old.kill9()
        promoted = await group.waitForPromotion(old)
        await old.restart()
        await old.cli('REPLICAOF', promoted.host, String(promoted.port))
        await group.waitForReplica(old)
      }
      // A Sentinel re-makes its link to a new primary at most once a second; a second failover would
      // start within that and the down-after time of the last switch.
      await sleep(DOWN_AFTER_MS + 1_500)
      expect(await group.primary()).toBe(promoted)
      const events = group.events()
      const sentinels = group.sentinels.map((s) => s.port)
      const count = (port: number, event: RegExp) => events.filter((line) => line.startsWith(`${port} `) && event.test(line)).length
      const seen = sentinels.map((port) => ({ port, switches: count(port, /\+switch-master/), masterDown: count(port, /\+sdown master/) }))
      // Every Sentinel follows each failover once; it counts a primary down at most once a failover (the killed one).
      expect(seen, events.join('\n')).toEqual(
        sentinels.map((port) => ({ port, switches: FAILOVERS, masterDown: expect.toSatisfy((n: number) => n <= FAILOVERS) })),
      )
    } finally {
      await group.stop()
    }
  }, 120_000)
})
