// Failover mode's (a) check: a lock granted to a second holder while the first holder's lease was
// still within its deadline and not released. The deadline is counted from before the acquire was
// sent, so the key outlives it on the server: a grant before it means the server that granted the
// second lease did not have the first one (a failover to a replica that lacked it), not a slow holder.
import type { DoubleGrant, LeaseInterval } from './check-result.js'
import { CLOCK_MARGIN_MS as MARGIN_MS, clockJumps, type FaultEvent, type OpEvent } from './history.js'
import { leaseKey } from './lease-intervals.js'

/**
 * Every pair of leases of one resource where the second was granted before the first's deadline
 * and before the first's release was even asked for. A pair with a jump forward of the server clock
 * between the two grants is `excused`, not counted: the jump expired the first key early (DESIGN.md
 * 3), which no lock can prevent and the fence exists for; the guarded run's other checks judge it.
 * "Between" as the clients could see it: after the first acquire was sent (the server granted it
 * at some moment before its reply was read, a loaded worker reads it late), before the second's
 * grant was read.
 */
export function doubleGrantsOf(leases: LeaseInterval[], ops: OpEvent[], faults: FaultEvent[] = []): { grants: DoubleGrant[]; excused: DoubleGrant[] } {
  const releaseAsked = new Map<string, number>()
  for (const e of ops) if (e.f === 'release' && e.type === 'invoke') releaseAsked.set(leaseKey(e.pid, e.resource, e.fence), e.time)
  const sent = acquiresSent(ops)
  const jumps = clockJumps(faults).map((f) => f.time)
  const grants: DoubleGrant[] = []
  const excused: DoubleGrant[] = []
  for (const a of leases) {
    const freedAt = Math.min(a.deadline - MARGIN_MS, releaseAsked.get(leaseKey(a.pid, a.resource, a.fence)) ?? Number.POSITIVE_INFINITY)
    for (const b of leases) {
      if (b === a || b.resource !== a.resource || b.start <= a.start || b.start >= freedAt) continue
      const pair = {
        resource: a.resource,
        first: { worker: a.worker, fence: a.fence, start: a.start, deadline: a.deadline },
        second: { worker: b.worker, fence: b.fence, start: b.start },
      }
      const after = sent.get(leaseKey(a.pid, a.resource, a.fence)) ?? a.start
      if (jumps.some((t) => t > after - MARGIN_MS && t < b.start + MARGIN_MS)) excused.push(pair)
      else grants.push(pair)
    }
  }
  return { grants, excused }
}

/** When each granted acquire was sent (its worker's last acquire invoke of the resource before the grant), by lease key. */
function acquiresSent(ops: OpEvent[]): Map<string, number> {
  const invoked = new Map<string, number>()
  const sent = new Map<string, number>()
  for (const e of ops) {
    if (e.f !== 'acquire') continue
    if (e.type === 'invoke') invoked.set(`${e.pid}|${e.resource}`, e.time)
    else if (e.type === 'ok' && e.fence !== undefined) {
      const at = invoked.get(`${e.pid}|${e.resource}`)
      if (at !== undefined) sent.set(leaseKey(e.pid, e.resource, e.fence), at)
    }
  }
  return sent
}

export const doubleGrantViolation = (grants: DoubleGrant[]): string | undefined =>
  grants.length === 0
    ? undefined
    : `(a) ${grants.length} double grants: a lock granted while another holder's lease was within its deadline and unreleased (first: ${grants[0]!.first.worker} fence ${grants[0]!.first.fence}, then ${grants[0]!.second.worker} fence ${grants[0]!.second.fence}, ${Math.round(grants[0]!.first.deadline - grants[0]!.second.start)} ms before the first lease's deadline)`
