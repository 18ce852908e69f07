// (a) for every primitive whose fences order its grants (the semaphore's permits, the election's
// terms): unique, and larger than every fence whose grant had returned before this one was asked for.
import type { LeaseInterval, SemaphoreCheck } from './check-result.js'
import type { OpEvent } from './history.js'

/** (a) Fences: unique, and larger than every fence whose acquire had returned before this one was asked for. */
export function fenceOrder(ops: OpEvent[], leases: LeaseInterval[], violations: string[], noun = 'permits') {
  const acquireInvoke = new Map<number, number[]>()
  for (const e of ops)
    if (e.f === 'acquire' && e.type === 'invoke' && e.worker !== 'probe') acquireInvoke.set(e.pid, [...(acquireInvoke.get(e.pid) ?? []), e.time])
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
  if (fenceRegressions.length) violations.push(`(a) ${fenceRegressions.length} ${noun} got a fence not above one granted before they asked`)
  if (duplicateFences.length) violations.push(`(a) ${duplicateFences.length} fences handed out twice`)
  return { fenceRegressions, duplicateFences }
}
