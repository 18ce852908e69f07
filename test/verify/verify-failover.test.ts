// 17. `npm run verify -- --mode failover`, in its quick form (about a minute and a half): a real
// primary, its replica and three `redis-server --sentinel` processes; the workers follow the
// Sentinels (ioredis). Seed 4's schedule: the replica is paused and its link cut, a lock is granted
// on the primary (or, with `replicas: 1`, refused by WAIT), the primary is killed -9 (then, the
// second time, paused), that holder is frozen, the Sentinels promote the replica, the old primary
// rejoins as its replica. With `replicas: 1` no lock is granted twice and the bank stays whole;
// the same schedule without `replicas` must show the double grant.
import { describe, expect, it } from 'vitest'
import { FAILOVER_QUICK_MS, FAILOVER_QUICK_SEED } from '../../verify/main.js'
import { FAILOVER_TTL } from '../../verify/options.js'
import { pgReady, quickVerify } from './quick-run.js'

const env = await pgReady('verify failover')

describe.skipIf(!env)('npm run verify -- --mode failover (quick form)', () => {
  it('17. failover before a lock replicated: with replicas no second holder; without, the control run shows the double grant', async () => {
    const options = { seed: FAILOVER_QUICK_SEED, chaosMs: FAILOVER_QUICK_MS, failover: true, ttl: FAILOVER_TTL }
    await quickVerify({ tag: 'verify failover', guarded: 'fenced (replicas: 1)', options }, (fenced, control, result) => {
      // Both failovers happened, in both runs, and the bank kept working around them.
      expect(fenced.stats.faults).toEqual({ 'failover-kill': 1, 'failover-pause': 1 })
      expect(control.stats.faults).toEqual({ 'failover-kill': 1, 'failover-pause': 1 })
      expect(fenced.stats.transfers).toBeGreaterThan(50)

      // replicas: 1: no double grant, money conserved, no stale write, no lost update, the locks come
      // back after each promotion, every lost lease signalled.
      expect(fenced.doubleGrants).toEqual([])
      expect(fenced.money.ok).toBe(true)
      expect(fenced.staleAccepted).toEqual([])
      expect(fenced.lostUpdates).toEqual([])
      expect(fenced.signals.missing).toEqual([])
      expect(fenced.ok, fenced.violations.join(' | ')).toBe(true)

      // No replicas: the promoted replica lacked a granted lock and granted it again.
      expect(control.doubleGrants?.length).toBeGreaterThan(0)
      expect(control.violations.some((v) => v.startsWith('(a)'))).toBe(true)
      expect(result.exitCode).toBe(0)
    })
  }, 240_000)
})
