// Stretches of time in which more than `limit` intervals overlap: how the semaphore's checker
// counts permits believed valid, holders inside the work, and permits as their holders saw them.
import type { Excess } from './check-result.js'

/** Stretches where more than `limit` of `intervals` overlap; ends sort before starts at the same time. */
export function excessOf(intervals: { from: number; to: number; worker: string; fence: number }[], limit: number): { max: number; excess: Excess[] } {
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
