// The soak's checks, run on each minute's events (and the minute before, so that a lease that
// spans the boundary is seen whole) with verify's checkers: leases rebuilt from the history, double
// grants of every exclusive lease (mutex, all-or-nothing, election, a write of a read/write lock),
// permits beyond the semaphore's limit, fences out of order; then every wait against its bound and
// every lease lost, with the fault it followed.
import type { LeaseInterval } from './check-result.js'
import { doubleGrantsOf } from './double-grants.js'
import { excessOf } from './excess.js'
import { fenceOrder } from './fence-order.js'
import { CLOCK_MARGIN_MS, type HistoryEvent, type LostEvent, type OpEvent } from './history.js'
import { leaseIntervals, leaseKey } from './lease-intervals.js'

/** The soak semaphore's limit (soak-worker.ts). */
export const SOAK_SEMAPHORE_LIMIT = 3

/**
 * How far past its `wait` an acquire may settle: a call in flight when the wait ends is given its
 * reply limit, and a step of the event loop on this shared machine. A bound, not a measurement.
 */
export const WAIT_SLACK_MS = 1_000

/** A fault on one topology, from its start to its end. */
export interface SoakFault {
  topology: string
  label: string
  start: number
  end: number
  /** Why the fault could not be applied or undone (a node that did not come back): the run then tests less than it says. */
  failed?: string
}

export interface WindowCheck {
  violations: string[]
  /** The longest wait of an acquire that settled in the window, and where. */
  longestWait: { ms: number; resource: string; worker: string; outcome: string }
  overBound: number
  /**
   * Leases lost in the window: by reason, whether a fault on its topology explains it, and whether
   * its holder had already asked to release it (a release that found the lock gone: with a reply
   * lost to a connection cut, the resent release finds the lock its first sending deleted).
   */
  lost: { resource: string; reason: string; fault: string | undefined; atRelease?: boolean }[]
}

const isOp = (e: HistoryEvent): e is OpEvent => e.kind === 'op'
const topologyOf = (resource: string) => resource.slice(0, resource.indexOf(':'))

/** Safety: the checkers, per resource. */
function safety(events: HistoryEvent[], end: number): string[] {
  const ops = events.filter(isOp)
  const leases = leaseIntervals(events, end)
  const modes = new Map<string, { mode?: string; permits?: number }>()
  for (const e of ops) if (e.f === 'acquire' && e.type === 'ok') modes.set(leaseKey(e.pid, e.resource, e.fence), (e.value ?? {}) as { mode?: string })
  const byResource = new Map<string, LeaseInterval[]>()
  for (const l of leases) {
    const list = byResource.get(l.resource)
    if (list) list.push(l)
    else byResource.set(l.resource, [l])
  }
  const violations: string[] = []
  for (const [resource, own] of byResource) {
    const info = (l: LeaseInterval) => modes.get(leaseKey(l.pid, l.resource, l.fence)) ?? {}
    if (resource.endsWith(':sem')) {
      const permits = own.flatMap((l) =>
        Array.from({ length: info(l).permits ?? 1 }, () => ({
          from: l.start,
          to: Math.min(l.end, l.deadline - CLOCK_MARGIN_MS),
          worker: l.worker,
          fence: l.fence,
        })),
      )
      const { max, excess } = excessOf(permits, SOAK_SEMAPHORE_LIMIT)
      if (excess.length) violations.push(`${resource}: ${max} permits at once, limit ${SOAK_SEMAPHORE_LIMIT} (${excess.length} stretches)`)
    }
    const exclusive = resource.endsWith(':sem') ? [] : doubleGrantsOf(own, ops).grants
    const writers = new Set(own.filter((l) => info(l).mode === 'write').map((l) => `${l.worker}|${l.fence}`))
    const writes = exclusive.filter((g) => !resource.endsWith(':rw') || [g.first, g.second].some((x) => writers.has(`${x.worker}|${x.fence}`)))
    if (writes.length)
      violations.push(
        `${resource}: ${writes.length} double grants (first ${writes[0]!.first.worker} fence ${writes[0]!.first.fence}, then ${writes[0]!.second.worker} fence ${writes[0]!.second.fence})`,
      )
    if (!resource.endsWith(':rw')) {
      const found: string[] = []
      const asked = ops.filter((e) => e.f === 'acquire' && (e.resource === resource || (e.type === 'invoke' && e.resource.includes(resource))))
      fenceOrder(asked, own.filter(askedWithin(asked)), found, 'leases')
      violations.push(...found.map((v) => `${resource}: ${v}`))
    }
  }
  return violations
}

/**
 * Leases whose acquire was asked for inside the window: fenceOrder takes a lease with no ask it
 * can see as asked at its grant, which a lease asked just before the window began was not. A
 * loop is sequential: its first grant in the window answers an ask in it only if one came first.
 */
const askedWithin = (asked: readonly OpEvent[]) => {
  const firstOk = new Map<number, number>()
  const firstInvoke = new Map<number, number>()
  for (const e of asked) {
    const first = e.type === 'invoke' ? firstInvoke : e.type === 'ok' ? firstOk : undefined
    if (first && !first.has(e.pid)) first.set(e.pid, e.time)
  }
  return (l: LeaseInterval) => l.start !== firstOk.get(l.pid) || (firstInvoke.get(l.pid) ?? Number.POSITIVE_INFINITY) <= l.start
}

/** Each acquire's wait against `wait + WAIT_SLACK_MS`. */
function waits(events: HistoryEvent[], wait: number): Pick<WindowCheck, 'longestWait' | 'overBound'> {
  let longestWait = { ms: 0, resource: '', worker: '', outcome: '' }
  let overBound = 0
  for (const e of events) {
    if (!isOp(e) || e.f !== 'acquire' || e.type === 'invoke') continue
    const waited = (e.value as { waited?: number } | undefined)?.waited
    if (waited === undefined) continue
    if (waited > wait + WAIT_SLACK_MS) overBound++
    if (waited > longestWait.ms)
      longestWait = { ms: waited, resource: e.resource, worker: e.worker, outcome: e.type === 'ok' ? 'granted' : (e.error ?? 'failed') }
  }
  return { longestWait, overBound }
}

/** Leases lost in [from, end), each with the fault on its topology that it followed (within a ttl and 2 s of the fault's end). */
function losses(events: HistoryEvent[], faults: readonly SoakFault[], from: number, ttl: number): WindowCheck['lost'] {
  const lost = events.filter((e): e is LostEvent => e.kind === 'lost' && e.time >= from)
  const releasing = new Set<string>()
  for (const e of events) if (e.kind === 'op' && e.f === 'release' && e.type === 'invoke') releasing.add(`${e.pid} ${e.resource} ${e.fence}`)
  return lost.map((e) => {
    const fault = faults.find((f) => f.topology === topologyOf(e.resource) && e.time >= f.start - CLOCK_MARGIN_MS && e.time <= f.end + ttl + 2_000)
    const atRelease = releasing.has(`${e.pid} ${e.resource} ${e.fence}`)
    return { resource: e.resource, reason: e.reason, fault: fault?.label, ...(atRelease ? { atRelease } : {}) }
  })
}

/** The checks of one window: `events` of the minute before and this one; `from` is where this minute starts. */
export function checkWindow(events: HistoryEvent[], o: { from: number; end: number; ttl: number; wait: number; faults: readonly SoakFault[] }): WindowCheck {
  return {
    violations: safety(events, o.end),
    ...waits(
      events.filter((e) => e.time >= o.from),
      o.wait,
    ),
    lost: losses(events, o.faults, o.from, o.ttl),
  }
}
