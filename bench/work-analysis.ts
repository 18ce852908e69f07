// One run of "S at work", added up: utilization from the permit-holding intervals the workers
// recorded, permits/s, waits, fairness, Redis commands per permit, and the idle gap of a permit
// between its release and its next holder (what a hand-off costs the pool).
import { percentile } from './stats.js'
import type { WorkSections } from './work-tasks.js'

/** One worker's run and how many permits each of its acquires takes. */
export interface WorkPart {
  permits: number
  sections: WorkSections
}

export interface WorkFigures {
  /** Permit-time in use over the window / (limit x window): 1 means every permit busy all the time. */
  utilization: number
  /** Share of the window during which all `limit` permits were held. */
  allBusy: number
  permitsPerSec: number
  waitP50: number
  waitP99: number
  waitMax: number
  /** p99 wait of the workers taking more than one permit (the mixed setting), else null. */
  heavyWaitP99: number | null
  /** Jain's index over the workers' acquisition counts: 1 = equal shares, 1/n = one worker took all. */
  fairness: number
  commandsPerPermit: number
  /** Client CPU of all the workers together per acquisition (acquire, wait, release; the timer's work is nil), µs. */
  clientCpuUs: number
  /** Permit freed (release sent) -> next acquire resolved with it, p50 and mean, ms (one-permit settings). */
  gapP50: number | null
  gapMean: number | null
  /** Release sent -> release answered, p50, ms. */
  releaseP50: number
  /** fencelock's hand-off in parts: release sent -> wake-up message arrived in the next holder's process, p50 ms. */
  toWakeP50: number | null
  /** Wake-up arrived -> its acquire resolved (the acquire script's round trip, from a woken process), p50 ms. */
  afterWakeP50: number | null
  /** Share of the matched gaps that the parts above cover (a wake-up arrived after the permit was freed). */
  wokenShare: number | null
  holdMean: number
  /** Redis time inside one script call (EVAL/EVALSHA usec / calls, acquire and release alike), µs. */
  scriptUs?: number
  failedAcquires: number
  errors: string[]
}

export function jain(counts: readonly number[]): number {
  const sum = counts.reduce((a, b) => a + b, 0)
  const squares = counts.reduce((a, b) => a + b * b, 0)
  return squares > 0 ? (sum * sum) / (counts.length * squares) : 0
}

/** Permit-time in the window, and the time during which the permits held reached `limit`. */
function busy(parts: WorkPart[], limit: number, from: number, to: number) {
  const points: { t: number; d: number }[] = []
  for (const { permits, sections: s } of parts)
    for (let i = 0; i < s.acquired.length; i++) {
      const a = Math.max(from, s.acquired[i]!)
      const b = Math.min(to, s.releasing[i]!)
      if (b > a) points.push({ t: a, d: permits }, { t: b, d: -permits })
    }
  points.sort((x, y) => x.t - y.t || x.d - y.d)
  let held = 0
  let last = from
  let permitTime = 0
  let fullTime = 0
  for (const p of points) {
    permitTime += held * (p.t - last)
    if (held >= limit) fullTime += p.t - last
    held += p.d
    last = p.t
  }
  return { utilization: permitTime / (limit * (to - from)), allBusy: fullTime / (to - from) }
}

/**
 * Each acquire after the first `limit` takes the earliest permit freed before it: its idle gap, and
 * (fencelock, when a wake-up message for its process arrived during the acquire) the gap's two
 * parts: release sent -> wake-up arrived, and wake-up arrived -> acquire resolved.
 */
function gaps(parts: WorkPart[], limit: number, from: number, to: number) {
  const acquired = parts.flatMap((p) => p.sections.acquired.map((at, i) => ({ at, woken: p.sections.woken[i] ?? null }))).sort((a, b) => a.at - b.at)
  const freed = parts.flatMap((p) => p.sections.releasing).sort((a, b) => a - b)
  const all: number[] = []
  const toWake: number[] = []
  const afterWake: number[] = []
  let next = 0
  for (let i = limit; i < acquired.length; i++) {
    const { at, woken } = acquired[i]!
    const slot = freed[next]
    if (slot === undefined || slot > at) continue
    next++
    if (at < from || at >= to) continue
    all.push(at - slot)
    if (woken !== null && woken >= slot) {
      toWake.push(woken - slot)
      afterWake.push(at - woken)
    }
  }
  return { all, toWake, afterWake }
}

export function analyseWork(parts: WorkPart[], limit: number, from: number, to: number, commands: number): WorkFigures {
  const inWindow = (t: number) => t >= from && t < to
  const waits: number[] = []
  const heavy: number[] = []
  const counts: number[] = []
  const releases: number[] = []
  const holds: number[] = []
  let total = 0
  for (const { permits, sections: s } of parts) {
    let n = 0
    total += s.acquired.length
    for (let i = 0; i < s.acquired.length; i++) {
      if (!inWindow(s.acquired[i]!)) continue
      n++
      waits.push(s.wait[i]!)
      if (permits > 1) heavy.push(s.wait[i]!)
      releases.push(s.released[i]! - s.releasing[i]!)
      holds.push(s.releasing[i]! - s.acquired[i]!)
    }
    counts.push(n)
  }
  const oneEach = parts.every((p) => p.permits === 1)
  const { all: g, toWake, afterWake } = oneEach ? gaps(parts, limit, from, to) : { all: [], toWake: [], afterWake: [] }
  return {
    ...busy(parts, limit, from, to),
    permitsPerSec: waits.length / ((to - from) / 1000),
    waitP50: percentile(waits, 50),
    waitP99: percentile(waits, 99),
    waitMax: Math.max(0, ...parts.map((p) => p.sections.longestFailedWait), ...parts.flatMap((p) => p.sections.wait)),
    heavyWaitP99: heavy.length ? percentile(heavy, 99) : null,
    fairness: jain(counts),
    commandsPerPermit: commands / Math.max(1, total),
    clientCpuUs: (parts.reduce((a, p) => a + p.sections.cpuMs, 0) * 1000) / Math.max(1, total),
    gapP50: oneEach ? percentile(g, 50) : null,
    gapMean: oneEach ? g.reduce((a, b) => a + b, 0) / Math.max(1, g.length) : null,
    releaseP50: percentile(releases, 50),
    toWakeP50: toWake.length ? percentile(toWake, 50) : null,
    afterWakeP50: afterWake.length ? percentile(afterWake, 50) : null,
    wokenShare: g.length ? toWake.length / g.length : null,
    holdMean: holds.reduce((a, b) => a + b, 0) / Math.max(1, holds.length),
    failedAcquires: parts.reduce((a, p) => a + p.sections.failedAcquires, 0),
    errors: parts.flatMap((p) => p.sections.errors).slice(0, 3),
  }
}
