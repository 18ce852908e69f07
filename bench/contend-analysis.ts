// A contended run's row: the sections of every process, in the order the lock was granted, turned
// into handoffs, gaps, waits, fairness and the counter check.
import type { LibKind } from './libs.js'
import type { Counters } from './redis.js'
import { gather, windowStats, type Section } from './sections.js'
import { percentile } from './stats.js'
import type { Sections } from './worker.js'

export interface ContendRow {
  lib: LibKind
  label: string
  tuned: boolean
  procs: number
  perProc: number
  seconds: number
  sections: number
  sectionsPerSec: number
  handoffsPerSec: number
  gapP50: number
  gapP99: number
  gapMax: number
  gapMean: number
  /** Mean time a section holds the lock (acquired -> release sent), ms. */
  holdMean: number
  waitP50: number
  waitP99: number
  /** Longest wait of any acquire of the run, failed ones included (a stall resolves after the window). */
  waitMax: number
  /** Commands sent by the lock library's connections (counted in each client), per acquisition. */
  wirePerAcq: number
  /** Wire commands per handoff (E). */
  wirePerHandoff: number
  /** INFO commandstats delta (includes redis.call()s inside scripts), minus the counter's GET+SET, per acquisition. */
  redisPerAcq: number
  /** Pub/sub messages received by all contending processes, per acquisition. */
  messagesPerAcq: number
  /** CPU of all contending processes together, per acquisition (µs). */
  clientCpuPerAcqUs: number
  /** CPU of the Redis server(s) (INFO cpu delta), per acquisition (µs). */
  redisCpuPerAcqUs: number
  byCommand: Record<string, number>
  /** Wire commands by name (BENCH_WIRE_DEBUG=1 only). */
  wireByName?: Record<string, number>
  fairness: number
  minSections: number
  maxSections: number
  counter: number
  lostUpdates: number
  overlaps: number
  fenceRegressions: number
  violations: number
  giveUps: number
  /** Acquires that failed for good (timed out or threw) and were retried by the benchmark loop. */
  failedAcquires: number
  errors: string[]
  unavailable?: string
}

export type ContendBase = Pick<ContendRow, 'lib' | 'label' | 'tuned' | 'procs' | 'perProc' | 'seconds'>

export function emptyRow(base: ContendBase): ContendRow {
  return {
    ...base,
    sections: 0,
    sectionsPerSec: Number.NaN,
    handoffsPerSec: Number.NaN,
    gapP50: Number.NaN,
    gapP99: Number.NaN,
    gapMax: Number.NaN,
    gapMean: Number.NaN,
    holdMean: Number.NaN,
    waitP50: Number.NaN,
    waitP99: Number.NaN,
    waitMax: Number.NaN,
    wirePerAcq: Number.NaN,
    wirePerHandoff: Number.NaN,
    redisPerAcq: Number.NaN,
    messagesPerAcq: Number.NaN,
    clientCpuPerAcqUs: Number.NaN,
    redisCpuPerAcqUs: Number.NaN,
    byCommand: {},
    fairness: Number.NaN,
    minSections: 0,
    maxSections: 0,
    counter: 0,
    lostUpdates: 0,
    overlaps: 0,
    fenceRegressions: 0,
    violations: 0,
    giveUps: 0,
    failedAcquires: 0,
    errors: [],
  }
}

/**
 * Handoffs in the order the lock was granted: a grant before the previous holder's release was sent
 * is an overlap, a fence not above the previous one a regression; a grant to another waiter inside
 * the window is a handoff, its gap measured from that release.
 */
function handoffsOf(all: Section[], inWindow: (s: Section) => boolean) {
  const gaps: number[] = []
  let handoffs = 0
  let handoffsTotal = 0
  let overlaps = 0
  let fenceRegressions = 0
  for (let i = 1; i < all.length; i++) {
    const s = all[i]!
    const prev = all[i - 1]!
    // Mutual exclusion: the next grant comes after the previous holder's release was sent.
    if (s.acquired < prev.releasing) overlaps++
    if (s.fence !== null && prev.fence !== null && s.fence <= prev.fence) fenceRegressions++
    if (prev.who !== s.who) {
      handoffsTotal++
      if (inWindow(s)) {
        handoffs++
        gaps.push(s.acquired - prev.releasing)
      }
    }
  }
  return { gaps, handoffs, handoffsTotal, overlaps, fenceRegressions }
}

export function analyseContention(base: ContendBase, parts: Sections[], used: Counters, counter: number, startAt: number, endAt: number): ContendRow {
  const { all, wire, cpuMs, messages, giveUps, failedAcquires, longestFailedWait, errors, wireByName } = gather(parts)
  all.sort((a, b) => a.acquired - b.acquired)
  const inWindow = (s: Section) => s.acquired >= startAt && s.acquired < endAt
  const { gaps, handoffs, handoffsTotal, overlaps, fenceRegressions } = handoffsOf(all, inWindow)
  const { waits, holds, most: maxSections, fewest: minSections } = windowStats(all, parts, inWindow)
  const seconds = (endAt - startAt) / 1000
  const lostUpdates = all.length - counter
  return {
    ...base,
    sections: all.length,
    sectionsPerSec: waits.length / seconds,
    handoffsPerSec: handoffs / seconds,
    gapP50: percentile(gaps, 50),
    gapP99: percentile(gaps, 99),
    gapMax: percentile(gaps, 100),
    gapMean: gaps.reduce((a, b) => a + b, 0) / gaps.length,
    holdMean: holds.reduce((a, b) => a + b, 0) / holds.length,
    waitP50: percentile(waits, 50),
    waitP99: percentile(waits, 99),
    // Over every section, not only the window: a stalled acquire usually resolves after the window.
    waitMax: Math.max(longestFailedWait, ...all.map((x) => x.wait)),
    wirePerAcq: wire / all.length,
    wirePerHandoff: wire / Math.max(1, handoffsTotal),
    redisPerAcq: (used.commands - 2 * all.length) / all.length,
    messagesPerAcq: messages / all.length,
    clientCpuPerAcqUs: (cpuMs * 1000) / all.length,
    redisCpuPerAcqUs: (used.cpuMs * 1000) / all.length,
    byCommand: used.byCommand,
    ...(Object.keys(wireByName).length ? { wireByName } : {}),
    fairness: minSections > 0 ? maxSections / minSections : Number.POSITIVE_INFINITY,
    minSections,
    maxSections,
    counter,
    lostUpdates,
    overlaps,
    fenceRegressions,
    violations: Math.abs(lostUpdates) + overlaps + fenceRegressions,
    giveUps,
    failedAcquires,
    errors,
  }
}
