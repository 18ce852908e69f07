// A semaphore run's row: permits matched to the releases that freed them (handoffs, gaps), the
// most sections at once, fence order, fairness.
import type { LibKind, LibSpec } from './libs.js'
import type { Counters } from './redis.js'
import { gather, windowStats, type Section } from './sections.js'
import { semaphoreLabel } from './semaphore-libs.js'
import { percentile } from './stats.js'
import type { Sections } from './worker.js'

export interface SemaphoreRow {
  lib: LibKind
  label: string
  procs: number
  limit: number
  seconds: number
  permits: number
  permitsPerSec: number
  /** Permits that went to another process than the one that freed them, per second. */
  handoffsPerSec: number
  /** Release sent by one process -> that permit acquired by another (permits matched in the order they were freed), ms. */
  gapP50: number
  gapP99: number
  gapMax: number
  holdMean: number
  waitP50: number
  waitP99: number
  waitMax: number
  wirePerAcq: number
  /** INFO commandstats delta, minus the protected side's INCR+DECR, per acquisition. */
  redisPerAcq: number
  messagesPerAcq: number
  clientCpuPerAcqUs: number
  redisCpuPerAcqUs: number
  fairness: number
  minPermits: number
  maxPermits: number
  /** Most holders the protected side (INCR/DECR) counted at once. */
  maxInside: number
  /** Most sections (acquired -> release sent) that overlapped in time. */
  maxOverlap: number
  fenceRegressions: number
  violations: number
  giveUps: number
  failedAcquires: number
  errors: string[]
  idle: {
    seconds: number
    waiters: number
    /** INFO commandstats delta while the waiters wait (their first attempts included, as in D). */
    redisCommands: number
    /** The same from `parkedAfter` ms on, when every waiter has made its first attempts: the cost of waiting itself. */
    parkedCommands: number
    parkedSeconds: number
    wireCommands: number
    waiterCpuMs: number
    redisCpuMs: number
    giveUps: number
  }
}

/**
 * Permits are alike: match each acquisition with the earliest permit freed (release sent) before it
 * and not taken yet. The first `limit` acquisitions take permits nobody freed; one with no release
 * to match means more permits out than the limit.
 */
function handoffsOf(all: Section[], limit: number, inWindow: (s: Section) => boolean) {
  const byAcquired = [...all].sort((a, b) => a.acquired - b.acquired)
  const byReleasing = [...all].sort((a, b) => a.releasing - b.releasing)
  const freed: { at: number; who: number }[] = []
  let head = 0
  let r = 0
  let unfreed = limit
  const gaps: number[] = []
  let handoffs = 0
  let overLimit = 0
  for (const s of byAcquired) {
    while (r < byReleasing.length && byReleasing[r]!.releasing < s.acquired) freed.push({ at: byReleasing[r]!.releasing, who: byReleasing[r++]!.who })
    if (unfreed > 0) {
      unfreed--
      continue
    }
    const slot = freed[head]
    if (!slot) {
      overLimit++ // more permits out than the limit (or the run's first sections): no release to match
      continue
    }
    head++
    if (slot.who !== s.who && inWindow(s)) {
      handoffs++
      gaps.push(s.acquired - slot.at)
    }
  }
  return { gaps, handoffs, overLimit }
}

/** Most sections overlapping in time (acquired -> release sent lies inside the real holding). */
function maxOverlapOf(all: Section[]): number {
  const points = all
    .flatMap((s) => [
      { t: s.acquired, d: 1 },
      { t: s.releasing, d: -1 },
    ])
    .sort((a, b) => a.t - b.t || a.d - b.d)
  let open = 0
  let maxOverlap = 0
  for (const p of points) maxOverlap = Math.max(maxOverlap, (open += p.d))
  return maxOverlap
}

/** Fences: above every fence whose acquire had returned before this one was called. */
function fenceRegressionsOf(all: Section[]): number {
  let fenceRegressions = 0
  const fenced = all.filter((s) => s.fence !== null)
  const byCalled = [...fenced].sort((a, b) => a.acquired - a.wait - (b.acquired - b.wait))
  const fencedByAcquired = [...fenced].sort((a, b) => a.acquired - b.acquired)
  let j = 0
  let maxFence = -Infinity
  for (const s of byCalled) {
    while (j < fencedByAcquired.length && fencedByAcquired[j]!.acquired < s.acquired - s.wait) maxFence = Math.max(maxFence, fencedByAcquired[j++]!.fence!)
    if (s.fence! <= maxFence) fenceRegressions++
  }
  return fenceRegressions
}

export function analyseSemaphore(
  lib: LibSpec,
  opts: { procs: number; limit: number },
  parts: Sections[],
  used: Counters,
  startAt: number,
  endAt: number,
): Omit<SemaphoreRow, 'idle'> {
  const { all, wire, cpuMs, messages, giveUps, failedAcquires, longestFailedWait, maxInside, errors } = gather(parts)
  const inWindow = (s: Section) => s.acquired >= startAt && s.acquired < endAt
  const { gaps, handoffs, overLimit } = handoffsOf(all, opts.limit, inWindow)
  const maxOverlap = maxOverlapOf(all)
  const fenceRegressions = fenceRegressionsOf(all)
  const { waits, holds, most: maxPermits, fewest: minPermits } = windowStats(all, parts, inWindow)
  const seconds = (endAt - startAt) / 1000
  const n = Math.max(1, all.length)
  return {
    lib: lib.kind,
    label: semaphoreLabel(lib),
    procs: opts.procs,
    limit: opts.limit,
    seconds,
    permits: all.length,
    permitsPerSec: waits.length / seconds,
    handoffsPerSec: handoffs / seconds,
    gapP50: percentile(gaps, 50),
    gapP99: percentile(gaps, 99),
    gapMax: percentile(gaps, 100),
    holdMean: holds.reduce((a, b) => a + b, 0) / Math.max(1, holds.length),
    waitP50: percentile(waits, 50),
    waitP99: percentile(waits, 99),
    waitMax: Math.max(longestFailedWait, ...all.map((x) => x.wait)),
    wirePerAcq: wire / n,
    redisPerAcq: (used.commands - 2 * all.length) / n,
    messagesPerAcq: messages / n,
    clientCpuPerAcqUs: (cpuMs * 1000) / n,
    redisCpuPerAcqUs: (used.cpuMs * 1000) / n,
    fairness: minPermits > 0 ? maxPermits / minPermits : Number.POSITIVE_INFINITY,
    minPermits,
    maxPermits,
    maxInside,
    maxOverlap,
    fenceRegressions,
    violations: (maxInside > opts.limit ? 1 : 0) + (maxOverlap > opts.limit ? 1 : 0) + overLimit + fenceRegressions,
    giveUps,
    failedAcquires,
    errors,
  }
}
