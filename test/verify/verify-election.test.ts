// `npm run verify -- --primitive election`, in its quick form (about 40 s): 4 candidate processes
// campaign, lead (rounds of read-modify-write on one PostgreSQL row, claimed and guarded by the
// term), proclaim, resign and observe, under seed 90's faults (pauses and a kill -9 of the leader,
// a Redis kill, a connection reset, a script flush). With the term checked by the resource, its log
// never accepts an older term, terms grow, observers never go back, every lost term is signalled;
// the same schedule with unguarded writes must make the checker report violations. The checker is
// also fed small hand-made histories, one per rule, so that each rule is seen to fail.
import { describe, expect, it } from 'vitest'
import { checkElection } from '../../verify/election-checker.js'
import type { HistoryEvent } from '../../verify/history.js'
import { ELECTION_QUICK_MS, ELECTION_QUICK_SEED } from '../../verify/main.js'
import type { FinalState, LedgerRow } from '../../verify/run.js'
import { pgReady, quickVerify } from './quick-run.js'

const env = await pgReady('verify election')

describe('the election checker on hand-made histories', () => {
  const R = 'leader'
  const final = (ledger: LedgerRow[], counter = ledger.length, probes: FinalState['probes'] = [{ resource: R, ok: true, waited: 10 }]): FinalState => ({
    initialTotal: 0,
    accounts: [{ id: 1, balance: counter, fence: 0 }],
    ledger,
    probes,
    healedAt: 0,
    chaosStart: 0,
    end: 5_000,
  })
  const rows = (...terms: [number, string][]): LedgerRow[] => terms.map(([fence, worker], i) => ({ seq: i + 1, account: 1, fence, worker }))
  /** A term from its campaign to its resignation, with one accepted write in between. */
  const term = (worker: string, pid: number, t: number, fence: number, released = true): HistoryEvent[] => [
    { kind: 'op', type: 'invoke', f: 'acquire', worker, pid, resource: R, time: t - 1 },
    { kind: 'op', type: 'ok', f: 'acquire', worker, pid, resource: R, fence, time: t, value: { deadline: t + 1_000 } },
    { kind: 'op', type: 'ok', f: 'write', worker, pid, resource: R, fence, time: t + 10 },
    { kind: 'op', type: 'invoke', f: 'release', worker, pid, resource: R, fence, time: t + 20 },
    { kind: 'op', type: 'ok', f: 'release', worker, pid, resource: R, fence, time: t + 21, value: { released } },
  ]
  const seen = (worker: string, pid: number, t: number, fence?: number, version = 0): HistoryEvent => ({
    kind: 'op',
    type: 'ok',
    f: 'observe',
    worker,
    pid,
    resource: R,
    time: t,
    value: fence === undefined ? { leader: null } : { fence, version, leader: worker },
  })
  const sorted = (events: HistoryEvent[]) => [...events].sort((a, b) => a.time - b.time)
  const hand = (events: HistoryEvent[], state: FinalState) => checkElection({ events: sorted(events), final: state, ttl: 1_000, fencing: true })
  const history = sorted([
    ...term('w0', 1, 100, 10),
    ...term('w1', 2, 200, 20),
    ...term('w2', 3, 300, 30),
    seen('w3', 4, 101, 10),
    seen('w3', 4, 150),
    seen('w3', 4, 201, 20),
    seen('w3', 4, 202, 20, 1),
    seen('w3', 4, 301, 30),
  ])

  it('passes terms in turn, each written in its turn, observed in order', () => {
    const result = hand(history, final(rows([10, 'a'], [20, 'b'], [20, 'b'], [30, 'c'])))
    expect(result.violations).toEqual([])
    expect(result.election).toMatchObject({ terms: 3, writes: 4, counter: 4, observers: 1, observed: 5, resigned: { ok: 3, lost: 0 } })
  })

  it('fails a write accepted with an older term, interleaved terms, a term two processes wrote, and a lost update', () => {
    const result = hand(history, final(rows([10, 'a'], [30, 'c'], [20, 'b'], [30, 'c'], [30, 'x']), 4))
    expect(result.staleAccepted.map((s) => [s.fence, s.after])).toEqual([[20, 30]])
    expect(result.election!.interleaved).toEqual([30])
    expect(result.election!.sharedTerms).toEqual([30])
    expect(result.violations.filter((v) => v.startsWith('(a)')).length).toBe(4)
  })

  it('fails an observer that goes back: an older term, an older proclamation, a term back after its vacancy', () => {
    const back = [seen('w3', 4, 400, 20), seen('w3', 4, 401, 30, 2), seen('w3', 4, 402, 30, 1), seen('w3', 4, 403), seen('w3', 4, 404, 30, 2)]
    const result = hand([...history, ...back], final(rows([10, 'a'], [20, 'b'], [30, 'c'])))
    expect(result.election!.observerRegressions.map((r) => `${r.before} -> ${r.now}`)).toEqual(['30.0 -> 20.0', '30.2 -> 30.1', 'vacant after 30 -> 30.2'])
    expect(result.ok).toBe(false)
  })

  it('fails a term not above one granted before it campaigned, a lost term never signalled, and a slow probe', () => {
    const events = [...term('w0', 1, 100, 10), ...term('w1', 2, 200, 5, false)]
    const result = hand(events, final(rows([10, 'a']), 1, [{ resource: R, ok: true, waited: 5_000 }]))
    expect(result.election!.fenceRegressions).toEqual([{ worker: 'w1', fence: 5, after: 10 }])
    expect(result.signals.missing.map((l) => l.fence)).toEqual([5])
    expect(result.liveness.ok).toBe(false)
  })
})

describe.skipIf(!env)('npm run verify -- --primitive election (quick form)', () => {
  it('one leader at a time as the resource tells it, terms that grow, observers in order; caught without the guard', async () => {
    await quickVerify(
      { tag: 'verify election', options: { seed: ELECTION_QUICK_SEED, chaosMs: ELECTION_QUICK_MS, primitive: 'election' } },
      (fenced, control, result) => {
        // The run did something: terms, writes, both pauses and a kill of a candidate, observers.
        const el = fenced.election!
        expect(fenced.stats.faults['pause-worker']).toBe(2)
        expect(fenced.stats.faults['kill-worker']).toBe(1)
        expect(el.terms).toBeGreaterThan(5)
        expect(el.writes).toBeGreaterThan(30)
        expect(el.resigned.ok).toBeGreaterThan(0)
        expect(el.observers).toBeGreaterThanOrEqual(4)
        expect(el.observed).toBeGreaterThan(el.terms)

        // (a) the resource: no older term accepted, terms contiguous and one process's, no lost update.
        expect(fenced.staleAccepted).toEqual([])
        expect(el.interleaved).toEqual([])
        expect(el.sharedTerms).toEqual([])
        expect(el.counter).toBe(el.writes)
        // A paused leader's term was refused by the resource once the next leader had claimed the row.
        expect(fenced.stats.staleRejected.claim + fenced.stats.staleRejected.write).toBeGreaterThan(0)
        // (a) terms grow; observers never went back.
        expect(el.fenceRegressions).toEqual([])
        expect(el.duplicateFences).toEqual([])
        expect(el.observerRegressions).toEqual([])
        // (c) and (d)
        expect(fenced.liveness.ok, fenced.violations.join(' | ')).toBe(true)
        expect(fenced.signals.lost).toBeGreaterThan(0)
        expect(fenced.signals.missing).toEqual([])
        expect(fenced.ok, fenced.violations.join(' | ')).toBe(true)

        // Control run, same schedule, writes the resource does not check against the term: caught.
        expect(control.violations.some((v) => v.startsWith('(a)'))).toBe(true)
        expect(control.staleAccepted.length).toBeGreaterThan(0)
        expect(result.exitCode).toBe(0)
      },
    )
  }, 120_000)
})
