// Leases as their holders saw them, rebuilt from the history: the part both checkers start from.
import type { LeaseInterval } from './check-result.js'
import type { HistoryEvent } from './history.js'

/** One lease's key in the history: its holder's pid, the resource, the fence. */
export const leaseKey = (pid: number, resource: string, fence: number | undefined) => `${pid}|${resource}|${fence}`

/** When each worker process exited, by pid. */
export function exitTimes(events: HistoryEvent[]): Map<number, number> {
  const exits = new Map<number, number>()
  for (const e of events) if (e.kind === 'meta' && e.what === 'exit' && e.pid !== undefined) exits.set(e.pid, e.time)
  return exits
}

/** Reconstructs each lease interval from the history. */
export function leaseIntervals(events: HistoryEvent[], endOfRun: number): LeaseInterval[] {
  const leases = new Map<string, LeaseInterval>()
  const exits = exitTimes(events)
  for (const e of events) {
    if (e.kind === 'op' && e.f === 'acquire' && e.type === 'ok' && e.fence !== undefined) {
      const deadline = (e.value as { deadline?: number } | undefined)?.deadline ?? Number.NaN
      leases.set(leaseKey(e.pid, e.resource, e.fence), {
        worker: e.worker,
        pid: e.pid,
        resource: e.resource,
        fence: e.fence,
        start: e.time,
        end: Number.NaN,
        ended: 'open',
        staleRejected: false,
        deadline,
      })
    }
  }
  const releaseInvoked = new Map<string, number>()
  for (const e of events) {
    if (e.kind === 'lost') {
      const lease = leases.get(leaseKey(e.pid, e.resource, e.fence))
      if (lease && lease.lost === undefined) lease.lost = e
      continue
    }
    if (e.kind !== 'op') continue
    const lease = leases.get(leaseKey(e.pid, e.resource, e.fence))
    if (!lease) continue
    if ((e.f === 'write' || e.f === 'claim' || e.f === 'fset') && e.type === 'fail' && e.error === 'stale') lease.staleRejected = true
    if (e.f !== 'release') continue
    if (e.type === 'invoke') releaseInvoked.set(leaseKey(e.pid, e.resource, e.fence), e.time)
    // A release that Redis answered "not held" after the lease's deadline may simply have arrived
    // after the key expired (slow network): not a lease lost while it was trusted.
    else if (e.type === 'ok')
      lease.ended = (e.value as { released?: boolean } | undefined)?.released ? 'released' : e.time > lease.deadline ? 'release-late' : 'release-false'
    else lease.ended = 'release-unknown'
  }
  for (const [k, lease] of leases) {
    const release = releaseInvoked.get(k)
    const lostAt = lease.lost?.time
    const exit = exits.get(lease.pid)
    const candidates = [release, lostAt, exit].filter((t): t is number => t !== undefined)
    lease.end = candidates.length ? Math.min(...candidates) : endOfRun
    if (lease.lost && (release === undefined || lease.lost.time <= release)) lease.ended = 'lost'
    else if (release === undefined && exit !== undefined) lease.ended = 'killed'
    else if (release !== undefined && lease.ended === 'open') lease.ended = exit !== undefined ? 'killed' : 'release-unknown'
  }
  return [...leases.values()].sort((a, b) => a.start - b.start)
}
