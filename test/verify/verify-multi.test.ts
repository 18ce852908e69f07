// `npm run verify -- --primitive multi`, in its quick form (about 30 s): 4 worker processes move
// money between 4 accounts, each transfer locking both accounts with `acquireAll` (in random
// order) and claiming each row with that account's fence, under seed 29's faults (two pauses of a
// holder until just past its deadline). With fencing, money is conserved, no write with an older
// fence is accepted, no update is lost, the locks come back, and every lost lease was signalled;
// the same schedule with fencing off must make the checker report violations.
import { describe, expect, it } from 'vitest'
import { MULTI_ACCOUNTS, MULTI_QUICK_MS, MULTI_QUICK_SEED } from '../../verify/main.js'
import { pgReady, quickVerify } from './quick-run.js'

const env = await pgReady('verify multi')

describe.skipIf(!env)('npm run verify -- --primitive multi (quick form)', () => {
  it('transfers under acquireAll keep money and fences intact with fencing, and violations are caught without it', async () => {
    await quickVerify({ tag: 'verify multi', options: { seed: MULTI_QUICK_SEED, chaosMs: MULTI_QUICK_MS, primitive: 'multi' } }, (fenced, control, result) => {
      // The run did something: transfers between the accounts, both pauses, leases lost to them.
      expect(fenced.stats.transfers).toBeGreaterThan(30)
      expect(fenced.stats.faults['pause-worker']).toBe(2)
      expect(new Set(fenced.leases.map((l) => l.resource)).size).toBe(MULTI_ACCOUNTS)
      // Each transfer holds two accounts' leases with their own fences.
      expect(fenced.leases.length).toBeGreaterThanOrEqual(2 * fenced.stats.transfers)

      // (a) with fencing: money conserved, no accepted write with an older fence, no lost update.
      expect(fenced.money).toEqual({ initial: 1_000 * MULTI_ACCOUNTS, final: 1_000 * MULTI_ACCOUNTS, ok: true })
      expect(fenced.staleAccepted).toEqual([])
      expect(fenced.lostUpdates).toEqual([])
      // (c) every account is locked again within one ttl (+ slack) after the heal, and a fresh client
      // locks each after kill -9 of every worker (two all-or-nothing waiters that waited for each
      // other with both locks free failed this: verify/repro/multi-queue-order.ts).
      expect(fenced.liveness.ok, fenced.violations.join(' | ')).toBe(true)
      // (d) every lease that was lost had its signal aborted.
      expect(fenced.signals.lost).toBeGreaterThan(0)
      expect(fenced.signals.missing).toEqual([])
      expect(fenced.ok, fenced.violations.join(' | ')).toBe(true)

      // Control run, same schedule, fencing off: the checker must catch the damage.
      expect(control.violations.some((v) => v.startsWith('(a)'))).toBe(true)
      expect(result.exitCode).toBe(0)
    })
  }, 120_000)
})
