// The semaphore mode's checker. From the history alone (CLOCK_MONOTONIC, shared by every process):
// (a) at most `limit` permits believed valid at once, nobody working on a permit it knew (or should
// have known) was lost, at most `limit` holders inside the protected work at once, and fences that
// grow in the order permits were granted; (c) liveness as for the mutex; (d) every lost permit's
// signal aborted. It returns the mutex checker's CheckResult shape, with a `semaphore` part.
import { leaseIntervals, stallsOf, type CheckResult, type LeaseInterval, type Overlap } from './checker.js'
import type { FaultEvent, HistoryEvent, OpEvent } from './history.js'
import type { FinalState } from './run.js'

/** A stretch of time in which more than `limit` permits counted at once. */
export interface Excess {
  from: number
  to: number
  ms: number
  /** How many counted at the worst moment of the stretch. */
  count: number
  permits: { worker: string; fence: number }[]
  /** Single node only: a permit of the stretch was granted before Redis restarted empty (and forgot it). */
  excusedBy?: string
}

/** One unit of protected work. */
export interface WorkUnit {
  worker: string
  fence: number
  start: number
  end: number
  /** Until when its permit was believed valid (deadline after extends, abort, release request, death). */
  validUntil: number
}

export interface SemaphoreCheck {
  /** The limit the run is held to. */
  limit: number
  /** Most permits believed valid at once. */
  maxBelieved: number
  /** Stretches with more than `limit` permits believed valid (judged). */
  excess: Excess[]
  /** The same, explained by an empty restart of the single Redis node (not judged; see docs/verify.md). */
  excused: Excess[]
  /** Most holders inside the protected work at once (a unit begun on a lost permit counts in full). */
  maxInside: number
  insideExcess: Excess[]
  /** Units of work begun after the permit's deadline or the abort of its signal. */
  workOnLost: WorkUnit[]
  /** Permits granted after another permit's acquire had returned, with a fence not above it. */
  fenceRegressions: { worker: string; fence: number; after: number }[]
  /** Fences handed out twice. */
  duplicateFences: number[]
  units: number
  extends: { ok: number; failed: number }
}

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

const key = (pid: number, resource: string, fence: number | undefined) => `${pid}|${resource}|${fence}`
const bump = (map: Record<string, number>, k: string) => void (map[k] = (map[k] ?? 0) + 1)

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

/** Stretches where more than `limit` of `intervals` overlap; ends sort before starts at the same time. */
function excessOf(intervals: { from: number; to: number; worker: string; fence: number }[], limit: number): { max: number; excess: Excess[] } {
  const points: { t: number; d: 1 | -1; i: number }[] = []
  intervals.forEach((x, i) => {
    if (x.to > x.from) points.push({ t: x.from, d: 1, i }, { t: x.to, d: -1, i })
  })
  points.sort((a, b) => a.t - b.t || a.d - b.d)
  const open = new Set<number>()
  let max = 0
  const excess: Excess[] = []
  let current: Excess | undefined
  for (const p of points) {
    if (p.d === 1) open.add(p.i)
    else open.delete(p.i)
    max = Math.max(max, open.size)
    if (open.size > limit) {
      const permits = [...open].map((i) => ({ worker: intervals[i]!.worker, fence: intervals[i]!.fence }))
      if (!current) current = { from: p.t, to: p.t, ms: 0, count: open.size, permits }
      else if (open.size > current.count) {
        current.count = open.size
        current.permits = permits
      }
      for (const q of permits) if (!current.permits.some((x) => x.fence === q.fence)) current.permits.push(q)
    } else if (current) {
      current.to = p.t
      current.ms = current.to - current.from
      excess.push(current)
      current = undefined
    }
  }
  return { max, excess }
}

export function checkSemaphore(input: SemaphoreCheckInput): CheckResult {
  const { events, final, ttl, limit } = input
  const ops = events.filter((e): e is OpEvent => e.kind === 'op')
  const faults = events.filter((e): e is FaultEvent => e.kind === 'fault')
  const violations: string[] = []
  const end = final.end
  const leases = leaseIntervals(events, end).filter((l) => l.worker !== 'probe')
  const exits = new Map<number, number>()
  for (const e of events) if (e.kind === 'meta' && e.what === 'exit' && e.pid !== undefined) exits.set(e.pid, e.time)

  // Extensions per permit, in order; units of work per permit.
  const extendsBy = new Map<string, { time: number; deadline: number }[]>()
  let extendsOk = 0
  let extendsFailed = 0
  const unitStarts = new Map<string, { time: number; pid: number; worker: string; fence: number }[]>()
  const unitEnds = new Map<string, number[]>()
  for (const e of ops) {
    const k = key(e.pid, e.resource, e.fence)
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

  // (a) permits believed valid at once.
  const valid = new Map<string, number>()
  const believed = leases.map((l) => {
    const until = validUntil(l, extendsBy.get(key(l.pid, l.resource, l.fence)) ?? [])
    valid.set(key(l.pid, l.resource, l.fence), until)
    return { from: l.start, to: until, worker: l.worker, fence: l.fence, lease: l }
  })
  const { max: maxBelieved, excess: believedExcess } = excessOf(believed, limit)
  // One Redis node restarted empty forgets the permits it held: nothing can count them then.
  const restarts = input.nodes === 1
    ? faults.filter((f) => f.fault === 'kill-redis' && f.phase === 'start').map((f) => ({ from: f.time, to: faults.find((g) => g.phase === 'end' && g.id === f.id)?.time ?? f.time, label: `kill-redis ${f.target} (fault ${f.id})` }))
    : []
  const excess: Excess[] = []
  const excused: Excess[] = []
  for (const x of believedExcess) {
    const starts = x.permits.map((p) => believed.find((b) => b.fence === p.fence && b.worker === p.worker)?.from ?? Infinity)
    const restart = restarts.find((r) => r.from < x.to && starts.some((s) => s < r.to))
    if (restart) excused.push({ ...x, excusedBy: restart.label })
    else excess.push(x)
  }
  if (excess.length) {
    const worst = excess.reduce((a, b) => (b.count > a.count ? b : a))
    violations.push(`(a) ${excess.length} stretches with more than ${limit} permits believed valid at once (worst: ${worst.count} for ${Math.round(worst.ms)} ms: ${worst.permits.map((p) => `${p.worker} fence ${p.fence}`).join(', ')})`)
  }

  // (a) units of work: begun only under a valid permit; at most `limit` inside at once.
  const units: WorkUnit[] = []
  for (const [k, starts] of unitStarts) {
    const ends = unitEnds.get(k) ?? []
    const until = valid.get(k) ?? -Infinity
    starts.forEach((s, i) => {
      const finished = ends.find((t) => t >= s.time && (starts[i + 1] === undefined || t <= starts[i + 1]!.time))
      const unitEnd = finished ?? Math.min(exits.get(s.pid) ?? end, end)
      units.push({ worker: s.worker, fence: s.fence, start: s.time, end: unitEnd, validUntil: until })
    })
  }
  const workOnLost = units.filter((u) => u.start >= u.validUntil)
  if (workOnLost.length) {
    violations.push(`(a) ${workOnLost.length} units of work begun on a permit already lost (after its deadline or its signal's abort), e.g. ${workOnLost.slice(0, 3).map((u) => `${u.worker} fence ${u.fence} ${Math.round(u.start - u.validUntil)} ms late`).join(', ')}`)
  }
  // A unit begun in time but overtaken by its deadline (a pause mid-unit) counts until the deadline:
  // no lock can stop that, only a fenced resource. A unit begun late counts in full.
  const inside = units.map((u) => ({ from: u.start, to: u.start < u.validUntil ? Math.min(u.end, u.validUntil) : u.end, worker: u.worker, fence: u.fence }))
  const { max: maxInside, excess: insideAll } = excessOf(inside, limit)
  const insideExcess = insideAll.filter((x) => !excused.some((e) => e.from < x.to && x.from < e.to))
  if (insideExcess.length) {
    const worst = insideExcess.reduce((a, b) => (b.count > a.count ? b : a))
    violations.push(`(a) ${insideExcess.length} stretches with more than ${limit} holders inside the protected work at once (worst: ${worst.count} for ${Math.round(worst.ms)} ms)`)
  }

  // (a) fences: unique, and larger than every fence whose acquire had returned before this one was asked for.
  const acquireInvoke = new Map<number, number[]>()
  for (const e of ops) if (e.f === 'acquire' && e.type === 'invoke' && e.worker !== 'probe') acquireInvoke.set(e.pid, [...(acquireInvoke.get(e.pid) ?? []), e.time])
  const granted = leases.map((l) => {
    const invokes = acquireInvoke.get(l.pid) ?? []
    const asked = invokes.filter((t) => t <= l.start).pop() ?? l.start
    return { asked, got: l.start, fence: l.fence, worker: l.worker }
  })
  const byGot = [...granted].sort((a, b) => a.got - b.got)
  const byAsked = [...granted].sort((a, b) => a.asked - b.asked)
  const fenceRegressions: SemaphoreCheck['fenceRegressions'] = []
  let j = 0
  let maxFence = -Infinity
  for (const g of byAsked) {
    while (j < byGot.length && byGot[j]!.got < g.asked) maxFence = Math.max(maxFence, byGot[j++]!.fence)
    if (g.fence <= maxFence) fenceRegressions.push({ worker: g.worker, fence: g.fence, after: maxFence })
  }
  const seen = new Set<number>()
  const duplicateFences = [...new Set(granted.map((g) => g.fence).filter((f) => (seen.has(f) ? true : (seen.add(f), false))))]
  if (fenceRegressions.length) violations.push(`(a) ${fenceRegressions.length} permits got a fence not above one granted before they asked`)
  if (duplicateFences.length) violations.push(`(a) ${duplicateFences.length} fences handed out twice`)

  // (b) informational, as for the mutex: permits overlapping beyond the limit as their holders saw
  // them, whatever the deadline said (a paused holder overlaps its successor).
  const overlaps: Overlap[] = excessOf(leases.map((l) => ({ from: l.start, to: l.end, worker: l.worker, fence: l.fence })), limit).excess.map((x) => {
    const involved = x.permits.map((p) => leases.find((l) => l.fence === p.fence && l.worker === p.worker)!).filter(Boolean).sort((a, b) => a.start - b.start)
    return { resource: involved[0]?.resource ?? '?', a: involved[0]!, b: involved[involved.length - 1]!, ms: x.ms }
  }).filter((o) => o.a && o.b)

  // (c) liveness: a permit granted within the bound after the final heal; a fresh client gets every
  // permit within the bound after every worker was killed with -9.
  const bound = ttl + 500
  const acquiredAt = ops.filter((e) => e.f === 'acquire' && e.type === 'ok').map((e) => e.time)
  const firstAfter = (t: number): number | null => {
    const next = acquiredAt.find((x) => x >= t)
    return next === undefined ? null : next - t
  }
  const resources = [...new Set(final.probes.map((p) => p.resource))]
  const afterHeal = resources.map((resource) => ({ resource, ms: firstAfter(final.healedAt) }))
  const starts = faults.filter((f) => f.phase === 'start').map((f) => f.time)
  const afterFaults = faults
    .filter((f) => f.phase === 'end' && !starts.some((s) => s > f.time && s < f.time + bound))
    .map((f) => ({ fault: f.fault, id: f.id, worst: firstAfter(f.time) }))
  const stalls = stallsOf(ops, faults, ttl)
  const livenessOk = afterHeal.every((r) => r.ms !== null && r.ms <= bound) && final.probes.every((p) => p.ok && p.waited <= bound)
  for (const r of afterHeal) {
    if (r.ms === null) violations.push(`(c) no permit of ${r.resource} was granted after the faults healed`)
    else if (r.ms > bound) violations.push(`(c) the first permit of ${r.resource} after the faults healed came ${Math.round(r.ms)} ms later (bound ${bound} ms)`)
  }
  for (const p of final.probes) {
    if (!p.ok) violations.push(`(c) a fresh client could not take a permit of ${p.resource} after every worker was killed: ${p.error}`)
    else if (p.waited > bound) violations.push(`(c) a fresh client waited ${Math.round(p.waited)} ms for a permit of ${p.resource} after every worker was killed with -9 (bound ${bound} ms)`)
  }

  // (d) every permit that ended without a successful release was signalled.
  const lostLeases = leases.filter((l) => l.ended === 'lost' || l.ended === 'release-false')
  const missing = lostLeases.filter((l) => !l.lost)
  const unjudged = leases.filter((l) => l.ended === 'killed' || l.ended === 'release-unknown' || l.ended === 'release-late' || l.ended === 'open').length
  const missingPastDeadline = missing.filter((l) => l.end > l.deadline + 20).length
  if (missing.length) {
    violations.push(`(d) ${missing.length} of ${lostLeases.length} lost permits never had their signal aborted (${missing.length - missingPastDeadline} found gone by release() before their deadline, ${missingPastDeadline} released after it)`)
  }

  const faultCounts: Record<string, number> = {}
  for (const f of faults) if (f.phase === 'start') bump(faultCounts, f.fault)
  const acquireFailures: Record<string, number> = {}
  for (const e of ops) if (e.f === 'acquire' && e.type === 'fail') bump(acquireFailures, (e.error ?? 'unknown').split(':')[0]!)
  const lostByReason: Record<string, number> = {}
  for (const e of events) if (e.kind === 'lost') bump(lostByReason, e.reason)

  const semaphore: SemaphoreCheck = {
    limit,
    maxBelieved,
    excess,
    excused,
    maxInside,
    insideExcess,
    workOnLost,
    fenceRegressions,
    duplicateFences,
    units: ops.filter((e) => e.f === 'work' && e.type === 'ok').length,
    extends: { ok: extendsOk, failed: extendsFailed },
  }
  return {
    ttl,
    fencing: input.fencing,
    money: { initial: 0, final: 0, ok: true },
    staleAccepted: [],
    lostUpdates: [],
    redisRestartSkips: 0,
    overlaps,
    liveness: { bound, afterHeal, probes: final.probes, afterFaults, stalls, ok: livenessOk },
    signals: { lost: lostLeases.length, aborted: lostLeases.length - missing.length, missing, missingPastDeadline, unjudged, ok: missing.length === 0 },
    leases,
    stats: {
      ops: ops.filter((e) => e.type === 'invoke' && e.worker !== 'probe').length,
      okOps: ops.filter((e) => e.type === 'ok' && e.worker !== 'probe').length,
      transfers: semaphore.units,
      faults: faultCounts,
      staleRejected: { claim: 0, write: 0, fset: 0 },
      acquireFailures,
      lostByReason,
      duration: end - (events[0]?.time ?? end),
    },
    violations,
    ok: violations.length === 0,
    semaphore,
  }
}
