// The election mode's checker. (a) as far as the protected resource can tell, one leader at a time:
// its log (commit order) never accepts a write with a term lower than one it accepted before,
// each term's writes are contiguous and come from one process, and the counter they increment lost
// no update; terms grow in the order they were granted; every observer yielded a sequence that
// never went backwards. (c) liveness; (d) every lost term's signal aborted. It returns the mutex
// checker's CheckResult shape, with an `election` part.
import type { CheckResult, ElectionCheck, ObserverRegression, StaleAccepted } from './check-result.js'
import { overlapsOf } from './checker.js'
import { fenceOrder } from './fence-order.js'
import type { FaultEvent, HistoryEvent, OpEvent } from './history.js'
import { historyStats } from './history-stats.js'
import { leaseIntervals } from './lease-intervals.js'
import { livenessBound, quietFaultEnds, recoveredInTime, stallsOf } from './liveness.js'
import type { FinalState } from './run.js'
import { signalsOf, signalViolation } from './signals.js'

export type { ElectionCheck, ObserverRegression } from './check-result.js'

export interface ElectionCheckInput {
  events: HistoryEvent[]
  final: FinalState
  ttl: number
  /** false for the control run (judged the same way: it must fail). */
  fencing: boolean
}

/** (a) The resource's log in commit order: terms never go down, each term contiguous and one process's, the counter whole. */
function resourceLog(final: FinalState, violations: string[]) {
  const log = final.ledger
  const staleAccepted: StaleAccepted[] = []
  const stretches = new Map<number, number>()
  const writers = new Map<number, Set<string>>()
  let highest = -Infinity
  log.forEach((row, i) => {
    if (row.fence < highest) staleAccepted.push({ store: 'sql', where: "the leader's row", fence: row.fence, after: highest })
    highest = Math.max(highest, row.fence)
    if (i === 0 || log[i - 1]!.fence !== row.fence) stretches.set(row.fence, (stretches.get(row.fence) ?? 0) + 1)
    writers.set(row.fence, (writers.get(row.fence) ?? new Set()).add(row.worker))
  })
  const interleaved = [...stretches].filter(([, n]) => n > 1).map(([fence]) => fence)
  const sharedTerms = [...writers].filter(([, w]) => w.size > 1).map(([fence]) => fence)
  const counter = (final.accounts[0]?.balance ?? 0) - final.initialTotal
  if (staleAccepted.length)
    violations.push(
      `(a) ${staleAccepted.length} writes accepted with a term lower than one accepted before (e.g. term ${staleAccepted[0]!.fence} after ${staleAccepted[0]!.after})`,
    )
  if (interleaved.length) violations.push(`(a) ${interleaved.length} terms whose writes another term's writes interleaved in the log`)
  if (sharedTerms.length) violations.push(`(a) ${sharedTerms.length} terms written by more than one process`)
  if (counter !== log.length) violations.push(`(a) the counter is ${counter} after ${log.length} accepted increments (lost updates)`)
  return { staleAccepted, interleaved, sharedTerms, writes: log.length, counter }
}

type Observed = { fence?: number; version?: number; leader: string | null }

/** (a) Per observing process: never a term (or a proclamation) older than one it yielded, never a term back after its vacancy. */
function observerChecks(ops: OpEvent[], violations: string[]) {
  const byPid = new Map<number, OpEvent[]>()
  for (const e of ops) if (e.f === 'observe' && e.type === 'ok') byPid.set(e.pid, [...(byPid.get(e.pid) ?? []), e])
  const regressions: ObserverRegression[] = []
  let observed = 0
  for (const [pid, seen] of byPid) {
    let last: { fence: number; version: number } | undefined
    let vacant = false
    for (const e of seen) {
      observed++
      const v = e.value as Observed
      if (v.leader === null || v.fence === undefined) {
        vacant = last !== undefined
        continue
      }
      const version = v.version ?? 0
      const back = last !== undefined && (v.fence < last.fence || (v.fence === last.fence && (vacant || version < last.version)))
      // After a step back the newest state yielded stays the one to compare with.
      if (back)
        regressions.push({
          worker: e.worker,
          pid,
          time: e.time,
          before: vacant ? `vacant after ${last!.fence}` : `${last!.fence}.${last!.version}`,
          now: `${v.fence}.${version}`,
        })
      else {
        last = { fence: v.fence, version }
        vacant = false
      }
    }
  }
  if (regressions.length)
    violations.push(
      `(a) ${regressions.length} times an observer yielded a state older than one it had yielded (e.g. ${regressions[0]!.worker}: ${regressions[0]!.before}, then ${regressions[0]!.now})`,
    )
  return { observers: byPid.size, observed, observerRegressions: regressions }
}

/**
 * (c) A leader at work within the bound after the final heal and after each fault that ended
 * alone (its first accepted write: a leader that keeps its term through the heal campaigns no
 * more, it writes); after every candidate was killed with -9, a fresh client elected within it.
 */
function electionLiveness(ops: OpEvent[], faults: FaultEvent[], final: FinalState, ttl: number, violations: string[]): CheckResult['liveness'] {
  const bound = livenessBound(ttl)
  const writes = ops.filter((e) => e.f === 'write' && e.type === 'ok').map((e) => e.time)
  const firstAfter = (t: number): number | null => {
    const next = writes.find((x) => x >= t)
    return next === undefined ? null : next - t
  }
  const afterHeal = [...new Set(final.probes.map((p) => p.resource))].map((resource) => ({ resource, ms: firstAfter(final.healedAt) }))
  const afterFaults = quietFaultEnds(faults, bound).map((f) => ({ fault: f.fault, id: f.id, worst: firstAfter(f.time) }))
  for (const r of afterHeal) {
    if (r.ms === null) violations.push(`(c) no leader of ${r.resource} wrote after the faults healed`)
    else if (r.ms > bound)
      violations.push(`(c) the first write of a leader of ${r.resource} after the faults healed came ${Math.round(r.ms)} ms later (bound ${bound} ms)`)
  }
  for (const p of final.probes) {
    if (!p.ok) violations.push(`(c) a fresh candidate was not elected in ${p.resource} after every worker was killed: ${p.error}`)
    else if (p.waited > bound)
      violations.push(`(c) a fresh candidate waited ${Math.round(p.waited)} ms to lead ${p.resource} after every worker was killed with -9 (bound ${bound} ms)`)
  }
  return { bound, afterHeal, probes: final.probes, afterFaults, stalls: stallsOf(ops, faults, ttl), ok: recoveredInTime(afterHeal, final.probes, bound) }
}

function statsOf(events: HistoryEvent[], ops: OpEvent[], faults: FaultEvent[], final: FinalState): CheckResult['stats'] {
  const counted = historyStats(events, ops, faults, final.end)
  const staleCount = (f: string) => ops.filter((e) => e.f === f && e.type === 'fail' && e.error === 'stale').length
  return {
    ...counted,
    transfers: ops.filter((e) => e.f === 'write' && e.type === 'ok').length,
    staleRejected: { claim: staleCount('claim'), write: staleCount('write'), fset: 0 },
  }
}

export function checkElection(input: ElectionCheckInput): CheckResult {
  const { events, final, ttl } = input
  const ops = events.filter((e): e is OpEvent => e.kind === 'op')
  const faults = events.filter((e): e is FaultEvent => e.kind === 'fault')
  const violations: string[] = []
  const leases = leaseIntervals(events, final.end).filter((l) => l.worker !== 'probe')
  const log = resourceLog(final, violations)
  const fences = fenceOrder(ops, leases, violations, 'terms')
  const observers = observerChecks(ops, violations)
  const liveness = electionLiveness(ops, faults, final, ttl, violations)
  const signals = signalsOf(leases)
  const unsignalled = signalViolation(signals, 'terms')
  if (unsignalled) violations.push(unsignalled)
  const resigns = ops.filter((e) => e.f === 'release' && e.type === 'ok' && e.worker !== 'probe')
  const released = resigns.filter((e) => (e.value as { released?: boolean } | undefined)?.released).length
  const election: ElectionCheck = {
    terms: leases.length,
    writes: log.writes,
    counter: log.counter,
    interleaved: log.interleaved,
    sharedTerms: log.sharedTerms,
    ...fences,
    ...observers,
    resigned: { ok: released, lost: resigns.length - released },
  }
  return {
    ttl,
    fencing: input.fencing,
    money: { initial: final.initialTotal, final: final.initialTotal + log.counter, ok: log.counter === log.writes },
    staleAccepted: log.staleAccepted,
    lostUpdates: [],
    redisRestartSkips: 0,
    overlaps: overlapsOf(leases),
    liveness,
    signals,
    leases,
    stats: statsOf(events, ops, faults, final),
    violations,
    ok: violations.length === 0,
    election,
  }
}
