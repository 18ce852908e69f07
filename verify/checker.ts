// The checker: reads a history and the final state, and says whether the run was safe (a), how
// often holders overlapped (b), whether the system came back (c), and whether every lost lease was
// signalled (d). It trusts nothing the workers concluded; it only compares what they observed.
import type { CheckResult, LeaseInterval, LostUpdate, Overlap, StaleAccepted } from './check-result.js'
import { doubleGrantsOf, doubleGrantViolation } from './double-grants.js'
import type { FaultEvent, HistoryEvent, OpEvent } from './history.js'
import { fenceOrder } from './fence-order.js'
import { historyStats } from './history-stats.js'
import { leaseIntervals, leaseKey } from './lease-intervals.js'
import { livenessBound, quietFaultEnds, recoveredInTime, stallsOf } from './liveness.js'
import type { FinalState } from './run.js'
import { signalsOf, signalViolation } from './signals.js'

export type { CheckResult, LeaseInterval, LostUpdate, Overlap, Recovery, Stall, StaleAccepted } from './check-result.js'
export { leaseIntervals } from './lease-intervals.js'
export { stallsOf } from './liveness.js'

export interface CheckInput {
  events: HistoryEvent[]
  final: FinalState
  ttl: number
  fencing: boolean
  /** Index of the Redis node that holds the fenced key (restarts there reset the guard). */
  stateNode?: string
  /**
   * Failover mode: no node restarts empty under the lock (failovers go to a replica), so a grant
   * while another lease is within its deadline is a safety violation too.
   */
  exclusive?: boolean
}

/** Pairs of leases of one resource whose intervals, as their holders saw them, overlap. */
export function overlapsOf(leases: LeaseInterval[]): Overlap[] {
  const out: Overlap[] = []
  const byResource = new Map<string, LeaseInterval[]>()
  for (const lease of leases) byResource.set(lease.resource, [...(byResource.get(lease.resource) ?? []), lease])
  for (const [resource, list] of byResource) {
    for (let i = 0; i < list.length; i++) {
      const a = list[i]!
      for (let j = i + 1; j < list.length && list[j]!.start < a.end; j++) {
        const b = list[j]!
        const ms = Math.min(a.end, b.end) - b.start
        if (ms > 0) out.push({ resource, a, b, ms })
      }
    }
  }
  return out
}

/**
 * Lost updates, found without trusting fences: per account, the ledger gives commit order; a write
 * that committed after write W on the same account but whose read had completed before W even
 * started is built on a value W was about to change.
 */
function lostUpdatesOf(ops: OpEvent[], final: FinalState): LostUpdate[] {
  interface Txn {
    worker: string
    resource: string
    fence: number
    readOk: number
    writeInvoke: number
    writeOk: number
    accounts: number[]
  }
  const byLease = new Map<string, Partial<Txn>>()
  for (const e of ops) {
    if (e.fence === undefined || (e.f !== 'read' && e.f !== 'write')) continue
    const k = leaseKey(e.pid, e.resource, e.fence)
    const t = byLease.get(k) ?? { worker: e.worker, resource: e.resource, fence: e.fence }
    if (e.f === 'read' && e.type === 'ok') t.readOk = e.time
    if (e.f === 'write' && e.type === 'invoke') t.writeInvoke = e.time
    if (e.f === 'write' && e.type === 'ok') {
      t.writeOk = e.time
      // Transfer mode records one write per account (`account`); the mutex one per transfer.
      const v = e.value as { from: number; to: number; account?: number }
      t.accounts = v.account !== undefined ? [v.account] : [v.from, v.to]
    }
    byLease.set(k, t)
  }
  const txns = [...byLease.values()].filter((t): t is Txn => t.writeOk !== undefined && t.readOk !== undefined && t.writeInvoke !== undefined)
  const seq = new Map<string, number>()
  for (const row of final.ledger) seq.set(`${row.account}|${row.fence}|${row.worker}`, row.seq)
  const out: LostUpdate[] = []
  for (const w of txns) {
    for (const w2 of txns) {
      if (w2 === w || w2.resource !== w.resource || w2.readOk >= w.writeInvoke) continue
      for (const account of w.accounts) {
        if (!w2.accounts.includes(account)) continue
        const a = seq.get(`${account}|${w.fence}|${w.worker}`)
        const b = seq.get(`${account}|${w2.fence}|${w2.worker}`)
        if (a !== undefined && b !== undefined && a < b) {
          out.push({ account, lost: { worker: w.worker, fence: w.fence, committed: w.writeOk }, by: { worker: w2.worker, fence: w2.fence, read: w2.readOk } })
        }
      }
    }
  }
  return out
}

/** (a) The money of the bank: every transfer moves it, none creates or destroys it. */
function moneyOf(final: FinalState, violations: string[]): CheckResult['money'] {
  const finalTotal = final.accounts.reduce((sum, a) => sum + a.balance, 0)
  const money = { initial: final.initialTotal, final: finalTotal, ok: finalTotal === final.initialTotal }
  if (!money.ok)
    violations.push(
      `(a) money not conserved: ${final.initialTotal} before, ${finalTotal} after (${finalTotal - final.initialTotal > 0 ? '+' : ''}${finalTotal - final.initialTotal})`,
    )
  return money
}

/** (a) SQL: per account, the ledger's fences in commit order never go backwards. */
function staleSqlWrites(final: FinalState): StaleAccepted[] {
  const staleAccepted: StaleAccepted[] = []
  const highest = new Map<number, number>()
  for (const row of final.ledger) {
    const max = highest.get(row.account) ?? -Infinity
    if (row.fence < max) staleAccepted.push({ store: 'sql', where: `account ${row.account}`, fence: row.fence, after: max })
    highest.set(row.account, Math.max(max, row.fence))
  }
  return staleAccepted
}

/** (a) Redis: a write that started after another one was acknowledged was applied after it. */
function staleRedisWrites(ops: OpEvent[], faults: FaultEvent[], stateNode: string): { staleAccepted: StaleAccepted[]; redisRestartSkips: number } {
  const restarts = faults.filter((f) => f.fault === 'kill-redis' && f.target === stateNode && f.phase === 'start').map((f) => f.time)
  const fsetInvoke = new Map<string, number>()
  const accepted: { resource: string; fence: number; invoke: number; ok: number }[] = []
  for (const e of ops) {
    if (e.f !== 'fset') continue
    const k = leaseKey(e.pid, e.resource, e.fence)
    if (e.type === 'invoke') fsetInvoke.set(k, e.time)
    else if (e.type === 'ok' && e.fence !== undefined) accepted.push({ resource: e.resource, fence: e.fence, invoke: fsetInvoke.get(k) ?? e.time, ok: e.time })
  }
  const staleAccepted: StaleAccepted[] = []
  let redisRestartSkips = 0
  for (const w2 of accepted) {
    let worst: (typeof accepted)[number] | undefined
    for (const w1 of accepted) {
      if (w1.resource !== w2.resource || w1.ok >= w2.invoke || w1.fence <= w2.fence) continue
      // The guard key lives in Redis memory: a restart in between wiped it together with the data.
      if (restarts.some((t) => t > w1.invoke && t < w2.invoke)) {
        redisRestartSkips++
        continue
      }
      if (!worst || w1.fence > worst.fence) worst = w1
    }
    if (worst) staleAccepted.push({ store: 'redis', where: w2.resource, fence: w2.fence, after: worst.fence, time: w2.ok })
  }
  return { staleAccepted, redisRestartSkips }
}

function staleViolations(lostUpdates: LostUpdate[], staleAccepted: StaleAccepted[], violations: string[]): void {
  if (lostUpdates.length)
    violations.push(
      `(a) ${lostUpdates.length} committed writes overwrote an account from a read taken before another holder's write to it committed (lost updates)`,
    )
  if (staleAccepted.length) {
    const sql = staleAccepted.filter((s) => s.store === 'sql').length
    violations.push(
      `(a) ${staleAccepted.length} accepted writes carried a fence lower than one accepted before (${sql} in SQL, ${staleAccepted.length - sql} in Redis)`,
    )
  }
}

/**
 * (a) Each resource's fences: unique, and above every fence of it granted before they were asked
 * for, whatever the server's clock did (DESIGN.md 18; the clock control breaks this on purpose).
 */
function fencesPerResource(ops: OpEvent[], leases: LeaseInterval[], violations: string[]): NonNullable<CheckResult['fenceOrder']> {
  const counts = { regressions: 0, duplicates: 0 }
  for (const resource of new Set(leases.map((l) => l.resource))) {
    const order = fenceOrder(
      ops.filter((e) => e.resource === resource),
      leases.filter((l) => l.resource === resource),
      violations,
      `leases of ${resource}`,
    )
    counts.regressions += order.fenceRegressions.length
    counts.duplicates += order.duplicateFences.length
  }
  return counts
}

/** (c) Each resource acquired again soon after the final heal, after each quiet fault, and by a fresh client. */
function livenessOf(ops: OpEvent[], faults: FaultEvent[], final: FinalState, ttl: number, violations: string[]): CheckResult['liveness'] {
  const bound = livenessBound(ttl)
  const acquiredAt = new Map<string, number[]>()
  for (const e of ops) if (e.f === 'acquire' && e.type === 'ok') acquiredAt.set(e.resource, [...(acquiredAt.get(e.resource) ?? []), e.time])
  const resources = [...new Set(final.probes.map((p) => p.resource))]
  const firstAfter = (resource: string, t: number): number | null => {
    const next = (acquiredAt.get(resource) ?? []).find((x) => x >= t)
    return next === undefined ? null : next - t
  }
  const afterHeal = resources.map((resource) => ({ resource, ms: firstAfter(resource, final.healedAt) }))
  const afterFaults = quietFaultEnds(faults, bound).map((f) => {
    const each = resources.map((r) => firstAfter(r, f.time))
    return { fault: f.fault, id: f.id, worst: each.some((x) => x === null) ? null : Math.max(...(each as number[])) }
  })
  const stalls = stallsOf(ops, faults, ttl)
  for (const r of afterHeal) {
    if (r.ms === null) violations.push(`(c) ${r.resource} was never acquired after the faults healed`)
    else if (r.ms > bound) violations.push(`(c) ${r.resource} was first acquired ${Math.round(r.ms)} ms after the faults healed (bound ${bound} ms)`)
  }
  for (const p of final.probes) {
    if (!p.ok) violations.push(`(c) a fresh client could not acquire ${p.resource} after every worker was killed: ${p.error}`)
    else if (p.waited > bound)
      violations.push(`(c) a fresh client waited ${Math.round(p.waited)} ms for ${p.resource} after every worker was killed with -9 (bound ${bound} ms)`)
  }
  return { bound, afterHeal, probes: final.probes, afterFaults, stalls, ok: recoveredInTime(afterHeal, final.probes, bound) }
}

function statsOf(events: HistoryEvent[], ops: OpEvent[], faults: FaultEvent[], end: number): CheckResult['stats'] {
  const counted = historyStats(events, ops, faults, end)
  const staleCount = (f: string) => ops.filter((e) => e.f === f && e.type === 'fail' && e.error === 'stale').length
  return {
    ops: counted.ops,
    okOps: counted.okOps,
    // Transfer mode writes once per account: count each transfer at its debited account.
    transfers: ops.filter((e) => {
      const v = e.value as { from?: number; account?: number } | undefined
      return e.f === 'write' && e.type === 'ok' && (v?.account === undefined || v.account === v.from)
    }).length,
    faults: counted.faults,
    staleRejected: { claim: staleCount('claim'), write: staleCount('write'), fset: staleCount('fset') },
    acquireFailures: counted.acquireFailures,
    lostByReason: counted.lostByReason,
    duration: counted.duration,
  }
}

export function check(input: CheckInput): CheckResult {
  const { events, final, ttl } = input
  const ops = events.filter((e): e is OpEvent => e.kind === 'op')
  const faults = events.filter((e): e is FaultEvent => e.kind === 'fault')
  const violations: string[] = []
  // (a) money, and fences of accepted writes never going backwards.
  const money = moneyOf(final, violations)
  const redis = staleRedisWrites(ops, faults, input.stateNode ?? 'redis0')
  const staleAccepted = [...staleSqlWrites(final), ...redis.staleAccepted]
  const lostUpdates = lostUpdatesOf(ops, final)
  staleViolations(lostUpdates, staleAccepted, violations)
  // (b) overlaps, as each holder saw its lease.
  const leases = leaseIntervals(events, final.end)
  const fences = fencesPerResource(ops, leases, violations)
  const overlaps = overlapsOf(leases)
  const { grants: doubleGrants, excused: doubleGrantsExcused } = input.exclusive ? doubleGrantsOf(leases, ops, faults) : { grants: [], excused: [] }
  const doubled = doubleGrantViolation(doubleGrants)
  if (doubled) violations.push(doubled)
  const liveness = livenessOf(ops, faults, final, ttl, violations)
  // (d) every lease that ended without a successful release was signalled.
  const signals = signalsOf(leases)
  const unsignalled = signalViolation(signals, 'leases')
  if (unsignalled) violations.push(unsignalled)
  return {
    ttl,
    fencing: input.fencing,
    money,
    staleAccepted,
    lostUpdates,
    fenceOrder: fences,
    redisRestartSkips: redis.redisRestartSkips,
    overlaps,
    ...(input.exclusive ? { doubleGrants, doubleGrantsExcused } : {}),
    liveness,
    signals,
    leases,
    stats: statsOf(events, ops, faults, final.end),
    violations,
    ok: violations.length === 0,
  }
}
