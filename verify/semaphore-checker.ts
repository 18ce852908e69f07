// The semaphore mode's checker. From the history alone (CLOCK_MONOTONIC, shared by every process):
// (a) at most `limit` permits believed valid at once, nobody working on a permit it knew (or should
// have known) was lost, at most `limit` holders inside the protected work at once, and fences that
// grow in the order permits were granted; (c) liveness as for the mutex; (d) every lost permit's
// signal aborted. It returns the mutex checker's CheckResult shape, with a `semaphore` part.
import type { CheckResult, Excess, LeaseInterval, Overlap, SemaphoreCheck, WorkUnit } from './check-result.js'
import { excessOf } from './excess.js'
import { fenceOrder } from './fence-order.js'
import { CLOCK_MARGIN_MS as MARGIN_MS, clockJumps, type FaultEvent, type HistoryEvent, type OpEvent } from './history.js'
import { historyStats } from './history-stats.js'
import { exitTimes, leaseIntervals, leaseKey } from './lease-intervals.js'
import { livenessBound, quietFaultEnds, recoveredInTime, stallsOf } from './liveness.js'
import type { FinalState } from './run.js'
import { signalsOf, signalViolation } from './signals.js'

export type { Excess, SemaphoreCheck, WorkUnit } from './check-result.js'

export interface SemaphoreCheckInput {
  events: HistoryEvent[]
  final: FinalState
  ttl: number
  /** false for a control run (reported, judged the same way). */
  fencing: boolean
  limit: number
  /** Redis nodes of the run: with one, an empty restart forgets permits and is excused. */
  nodes: number
}

type Extension = { time: number; deadline: number }
type UnitStart = { time: number; pid: number; worker: string; fence: number }

/**
 * When the holder stopped believing its permit valid: the acquire's deadline, pushed by each
 * extension that came back before the deadline then current, capped by the interval's end (release
 * request, signal abort, process death).
 */
function validUntil(lease: LeaseInterval, extendsOf: { time: number; deadline: number }[]): number {
  let deadline = lease.deadline
  for (const e of extendsOf) {
    if (e.time > deadline) break
    deadline = Math.max(deadline, e.deadline)
  }
  return Math.min(lease.end, Number.isNaN(deadline) ? lease.end : deadline)
}

/** Extensions per permit, in order; units of work per permit (starts and ends). */
function permitEvents(ops: OpEvent[]) {
  const extendsBy = new Map<string, Extension[]>()
  let extendsOk = 0
  let extendsFailed = 0
  const unitStarts = new Map<string, UnitStart[]>()
  const unitEnds = new Map<string, number[]>()
  for (const e of ops) {
    const k = leaseKey(e.pid, e.resource, e.fence)
    if (e.f === 'extend' && e.type === 'ok') {
      extendsOk++
      const deadline = (e.value as { deadline?: number } | undefined)?.deadline
      if (deadline !== undefined) extendsBy.set(k, [...(extendsBy.get(k) ?? []), { time: e.time, deadline }])
    }
    if (e.f === 'extend' && e.type !== 'ok' && e.type !== 'invoke') extendsFailed++
    if (e.f === 'work' && e.fence !== undefined) {
      if (e.type === 'invoke') unitStarts.set(k, [...(unitStarts.get(k) ?? []), { time: e.time, pid: e.pid, worker: e.worker, fence: e.fence }])
      else unitEnds.set(k, [...(unitEnds.get(k) ?? []), e.time])
    }
  }
  return { extendsBy, extendsOk, extendsFailed, unitStarts, unitEnds }
}

/**
 * When a single Redis node forgot permits it held, which nothing can count then: it restarted
 * empty (from the kill to the restart), or its clock jumped forward (the jump: every permit is
 * scored by the node's TIME, so all of them expired at once, DESIGN.md 3; the mutex checker
 * excuses the same, verify/double-grants.ts). A stretch over the limit is excused when it holds a
 * permit granted before that and one granted after it.
 */
function forgettings(faults: FaultEvent[]): { from: number; to: number; label: string }[] {
  const endOf = (f: FaultEvent) => faults.find((g) => g.phase === 'end' && g.id === f.id)?.time ?? f.time
  const restarts = faults
    .filter((f) => f.fault === 'kill-redis' && f.phase === 'start')
    .map((f) => ({ from: f.time, to: endOf(f), label: `kill-redis ${f.target} (fault ${f.id})` }))
  const jumps = clockJumps(faults).map((f) => ({ from: f.time, to: f.time, label: `clock ${f.target} (fault ${f.id})` }))
  return [...restarts, ...jumps]
}

/** (a) Permits believed valid at once: over the limit is a violation, unless the single node forgot permits then (see `forgettings`). */
function believedOverLimit(
  leases: LeaseInterval[],
  extendsBy: Map<string, Extension[]>,
  faults: FaultEvent[],
  input: SemaphoreCheckInput,
  violations: string[],
) {
  const { limit } = input
  const valid = new Map<string, number>()
  const believed = leases.map((l) => {
    const until = validUntil(l, extendsBy.get(leaseKey(l.pid, l.resource, l.fence)) ?? [])
    valid.set(leaseKey(l.pid, l.resource, l.fence), until)
    return { from: l.start, to: until, worker: l.worker, fence: l.fence, lease: l }
  })
  const { max: maxBelieved, excess: believedExcess } = excessOf(believed, limit)
  const forgotten = input.nodes === 1 ? forgettings(faults) : []
  const excess: Excess[] = []
  const excused: Excess[] = []
  for (const x of believedExcess) {
    const starts = x.permits.map((p) => believed.find((b) => b.fence === p.fence && b.worker === p.worker)?.from ?? Infinity)
    const cause = forgotten.find((r) => r.from < x.to && starts.some((s) => s < r.to + MARGIN_MS) && starts.some((s) => s > r.from - MARGIN_MS))
    if (cause) excused.push({ ...x, excusedBy: cause.label })
    else excess.push(x)
  }
  if (excess.length) {
    const worst = excess.reduce((a, b) => (b.count > a.count ? b : a))
    violations.push(
      `(a) ${excess.length} stretches with more than ${limit} permits believed valid at once (worst: ${worst.count} for ${Math.round(worst.ms)} ms: ${worst.permits.map((p) => `${p.worker} fence ${p.fence}`).join(', ')})`,
    )
  }
  return { valid, maxBelieved, excess, excused }
}

/** Each unit of work with its end (or its process's death) and until when its permit was valid. */
function unitsOf(permits: ReturnType<typeof permitEvents>, valid: Map<string, number>, exits: Map<number, number>, end: number): WorkUnit[] {
  const units: WorkUnit[] = []
  for (const [k, starts] of permits.unitStarts) {
    const ends = permits.unitEnds.get(k) ?? []
    const until = valid.get(k) ?? -Infinity
    starts.forEach((s, i) => {
      const finished = ends.find((t) => t >= s.time && (starts[i + 1] === undefined || t <= starts[i + 1]!.time))
      const unitEnd = finished ?? Math.min(exits.get(s.pid) ?? end, end)
      units.push({ worker: s.worker, fence: s.fence, start: s.time, end: unitEnd, validUntil: until })
    })
  }
  return units
}

/** (a) Units of work: begun only under a valid permit; at most `limit` inside at once. */
function workChecks(units: WorkUnit[], excused: Excess[], limit: number, violations: string[]) {
  const workOnLost = units.filter((u) => u.start >= u.validUntil)
  if (workOnLost.length) {
    violations.push(
      `(a) ${workOnLost.length} units of work begun on a permit already lost (after its deadline or its signal's abort), e.g. ${workOnLost
        .slice(0, 3)
        .map((u) => `${u.worker} fence ${u.fence} ${Math.round(u.start - u.validUntil)} ms late`)
        .join(', ')}`,
    )
  }
  // A unit begun in time but overtaken by its deadline (a pause mid-unit) counts until the deadline:
  // no lock can stop that, only a fenced resource. A unit begun late counts in full.
  const inside = units.map((u) => ({ from: u.start, to: u.start < u.validUntil ? Math.min(u.end, u.validUntil) : u.end, worker: u.worker, fence: u.fence }))
  const { max: maxInside, excess: insideAll } = excessOf(inside, limit)
  const insideExcess = insideAll.filter((x) => !excused.some((e) => e.from < x.to && x.from < e.to))
  if (insideExcess.length) {
    const worst = insideExcess.reduce((a, b) => (b.count > a.count ? b : a))
    violations.push(
      `(a) ${insideExcess.length} stretches with more than ${limit} holders inside the protected work at once (worst: ${worst.count} for ${Math.round(worst.ms)} ms)`,
    )
  }
  return { workOnLost, maxInside, insideExcess }
}

/**
 * (b) Informational, as for the mutex: permits overlapping beyond the limit as their holders saw
 * them, whatever the deadline said (a paused holder overlaps its successor).
 */
function overlapsBeyondLimit(leases: LeaseInterval[], limit: number): Overlap[] {
  return excessOf(
    leases.map((l) => ({ from: l.start, to: l.end, worker: l.worker, fence: l.fence })),
    limit,
  )
    .excess.map((x) => {
      const involved = x.permits
        .map((p) => leases.find((l) => l.fence === p.fence && l.worker === p.worker)!)
        .filter(Boolean)
        .sort((a, b) => a.start - b.start)
      return { resource: involved[0]?.resource ?? '?', a: involved[0]!, b: involved[involved.length - 1]!, ms: x.ms }
    })
    .filter((o) => o.a && o.b)
}

/**
 * (c) Liveness: a permit granted within the bound after the final heal; a fresh client gets every
 * permit within the bound after every worker was killed with -9.
 */
function permitLiveness(ops: OpEvent[], faults: FaultEvent[], final: FinalState, ttl: number, violations: string[]): CheckResult['liveness'] {
  const bound = livenessBound(ttl)
  const acquiredAt = ops.filter((e) => e.f === 'acquire' && e.type === 'ok').map((e) => e.time)
  const firstAfter = (t: number): number | null => {
    const next = acquiredAt.find((x) => x >= t)
    return next === undefined ? null : next - t
  }
  const resources = [...new Set(final.probes.map((p) => p.resource))]
  const afterHeal = resources.map((resource) => ({ resource, ms: firstAfter(final.healedAt) }))
  const afterFaults = quietFaultEnds(faults, bound).map((f) => ({ fault: f.fault, id: f.id, worst: firstAfter(f.time) }))
  const stalls = stallsOf(ops, faults, ttl)
  for (const r of afterHeal) {
    if (r.ms === null) violations.push(`(c) no permit of ${r.resource} was granted after the faults healed`)
    else if (r.ms > bound)
      violations.push(`(c) the first permit of ${r.resource} after the faults healed came ${Math.round(r.ms)} ms later (bound ${bound} ms)`)
  }
  for (const p of final.probes) {
    if (!p.ok) violations.push(`(c) a fresh client could not take a permit of ${p.resource} after every worker was killed: ${p.error}`)
    else if (p.waited > bound)
      violations.push(
        `(c) a fresh client waited ${Math.round(p.waited)} ms for a permit of ${p.resource} after every worker was killed with -9 (bound ${bound} ms)`,
      )
  }
  return { bound, afterHeal, probes: final.probes, afterFaults, stalls, ok: recoveredInTime(afterHeal, final.probes, bound) }
}

export function checkSemaphore(input: SemaphoreCheckInput): CheckResult {
  const { events, final, ttl, limit } = input
  const ops = events.filter((e): e is OpEvent => e.kind === 'op')
  const faults = events.filter((e): e is FaultEvent => e.kind === 'fault')
  const violations: string[] = []
  const leases = leaseIntervals(events, final.end).filter((l) => l.worker !== 'probe')
  const permits = permitEvents(ops)
  const believed = believedOverLimit(leases, permits.extendsBy, faults, input, violations)
  const work = workChecks(unitsOf(permits, believed.valid, exitTimes(events), final.end), believed.excused, limit, violations)
  const fences = fenceOrder(ops, leases, violations)
  const overlaps = overlapsBeyondLimit(leases, limit)
  const liveness = permitLiveness(ops, faults, final, ttl, violations)
  const signals = signalsOf(leases)
  const unsignalled = signalViolation(signals, 'permits')
  if (unsignalled) violations.push(unsignalled)
  const semaphore: SemaphoreCheck = {
    limit,
    maxBelieved: believed.maxBelieved,
    excess: believed.excess,
    excused: believed.excused,
    maxInside: work.maxInside,
    insideExcess: work.insideExcess,
    workOnLost: work.workOnLost,
    fenceRegressions: fences.fenceRegressions,
    duplicateFences: fences.duplicateFences,
    units: ops.filter((e) => e.f === 'work' && e.type === 'ok').length,
    extends: { ok: permits.extendsOk, failed: permits.extendsFailed },
  }
  const counted = historyStats(events, ops, faults, final.end)
  return {
    ttl,
    fencing: input.fencing,
    money: { initial: 0, final: 0, ok: true },
    staleAccepted: [],
    lostUpdates: [],
    redisRestartSkips: 0,
    overlaps,
    liveness,
    signals,
    leases,
    stats: {
      ops: counted.ops,
      okOps: counted.okOps,
      transfers: semaphore.units,
      faults: counted.faults,
      staleRejected: { claim: 0, write: 0, fset: 0 },
      acquireFailures: counted.acquireFailures,
      lostByReason: counted.lostByReason,
      duration: counted.duration,
    },
    violations,
    ok: violations.length === 0,
    semaphore,
  }
}
