// The critical sections the contending processes report, added up, and the figures every
// contended scenario takes from those inside its measured window.
import type { Sections } from './worker.js'

/** One critical section as a worker reported it. */
export interface Section {
  who: number
  acquired: number
  releasing: number
  wait: number
  fence: number | null
}

/** The workers' reports of one run, added up: every section, and the counters. */
export function gather(parts: Sections[]) {
  const all: Section[] = []
  const wireByName: Record<string, number> = {}
  const errors: string[] = []
  let wire = 0
  let cpuMs = 0
  let messages = 0
  let giveUps = 0
  let failedAcquires = 0
  let longestFailedWait = 0
  let maxInside = 0
  for (const p of parts) {
    for (const [k, v] of Object.entries(p.wireByName)) wireByName[k] = (wireByName[k] ?? 0) + v
    wire += p.wire
    cpuMs += p.cpuMs
    messages += p.messages
    giveUps += p.giveUps
    failedAcquires += p.failedAcquires
    longestFailedWait = Math.max(longestFailedWait, p.longestFailedWait)
    maxInside = Math.max(maxInside, p.maxInside ?? 0)
    errors.push(...p.errors)
    for (let i = 0; i < p.acquired.length; i++)
      all.push({ who: p.who[i]!, acquired: p.acquired[i]!, releasing: p.releasing[i]!, wait: p.wait[i]!, fence: p.fence[i] ?? null })
  }
  return { all, wire, cpuMs, messages, giveUps, failedAcquires, longestFailedWait, maxInside, errors, wireByName }
}

/** Waits, holds and sections per waiter of the sections acquired inside the window, in the order given. */
export function windowStats(sections: Section[], parts: Sections[], inWindow: (s: Section) => boolean) {
  const waits: number[] = []
  const holds: number[] = []
  const perWho = new Map<number, number>()
  for (const p of parts) for (const who of new Set(p.who)) perWho.set(who, 0)
  for (const s of sections) {
    if (!inWindow(s)) continue
    waits.push(s.wait)
    holds.push(s.releasing - s.acquired)
    perWho.set(s.who, (perWho.get(s.who) ?? 0) + 1)
  }
  const counts = [...perWho.values()]
  return { waits, holds, most: counts.length ? Math.max(...counts) : 0, fewest: counts.length ? Math.min(...counts) : 0 }
}
