// The nemesis: a fault schedule drawn from the seed alone (so a failing seed replays the same
// faults at the same offsets), and the code that applies each fault to the live system.
import type { FaultKind } from './history.js'
import { rng } from './rng.js'

export interface PlannedFault {
  id: number
  /** Offset from the start of the chaos phase, ms. */
  at: number
  kind: FaultKind
  /** How long the fault lasts (0 = instant). For kills: how long until the respawn/restart. */
  duration: number
  /** Worker slot or Redis node index; for worker faults, used when no worker holds `resource`. */
  index: number
  /** Worker faults prefer the current holder of this resource (index into the resources). */
  resource: number
  /** Extra delay for 'delay' faults, ms; for 'pause-worker' with `justPast`, how far past the holder's deadline it resumes. */
  delayMs: number
  /**
   * 'pause-worker' only: resume the holder just after its lease's deadline (deadline + delayMs)
   * instead of after `duration`: the moment a stale holder most likely races the next holder.
   */
  justPast: boolean
  /** 'clock' only (verify/clock-faults.ts): how far the server's clock steps back, and how far it then jumps forward, ms. */
  clock?: { back: number; forward: number }
}

export interface ScheduleOptions {
  seed: number
  /** Length of the chaos phase, ms. */
  duration: number
  ttl: number
  workers: number
  nodes: number
  resources: number
  /** Failover mode: only failovers (the primary killed or paused), each given time to heal. */
  failover?: boolean
  /** Failover mode with two replicas: every failover promotes the replica that missed a grant the other acknowledged. */
  replicaNodes?: 1 | 2
}

const WEIGHTS: [FaultKind, number][] = [
  ['pause-worker', 3],
  ['kill-worker', 2],
  ['kill-redis', 1.5],
  ['partition', 1.5],
  ['delay', 1],
  ['script-flush', 1],
  ['reconnect', 1],
]

function pickKind(next: () => number): FaultKind {
  const total = WEIGHTS.reduce((sum, [, w]) => sum + w, 0)
  let x = next() * total
  for (const [kind, w] of WEIGHTS) {
    x -= w
    if (x < 0) return kind
  }
  return 'reconnect'
}

/**
 * One fault at a time, separated by quiet gaps, so that "after the fault heals" is well defined.
 * Worker pauses outlast the ttl (1.3 to 2.5 ttl): that is the case fencing exists for.
 */
export function planFaults(options: ScheduleOptions): PlannedFault[] {
  if (options.failover) return planFailovers(options)
  const random = rng(options.seed)
  const { ttl } = options
  const plan: PlannedFault[] = []
  let at = random.int(200, 600)
  while (at < options.duration) {
    const kind = pickKind(random.next)
    let duration = 0
    let index = 0
    let delayMs = 0
    let justPast = false
    switch (kind) {
      case 'pause-worker':
        duration = random.int(Math.round(ttl * 1.3), Math.round(ttl * 2.5))
        index = random.int(0, options.workers - 1)
        justPast = random.next() < 0.5
        delayMs = random.int(0, 150)
        break
      case 'kill-worker':
        duration = random.int(100, 600)
        index = random.int(0, options.workers - 1)
        break
      case 'kill-redis':
        duration = random.int(200, Math.round(ttl * 1.2))
        index = random.int(0, options.nodes - 1)
        break
      case 'partition':
        duration = random.int(Math.round(ttl * 0.5), Math.round(ttl * 2))
        index = random.int(0, options.nodes - 1)
        break
      case 'delay':
        duration = random.int(ttl, ttl * 2)
        index = random.int(0, options.nodes - 1)
        delayMs = random.int(20, Math.round(ttl * 0.8))
        break
      case 'script-flush':
      case 'reconnect':
        index = random.int(0, options.nodes - 1)
        break
    }
    const resource = random.int(0, options.resources - 1)
    if (at + duration > options.duration) break
    plan.push({ id: plan.length + 1, at, kind, duration, index, resource, delayMs, justPast })
    at += duration + random.int(Math.round(ttl * 0.3), Math.round(ttl * 1.2))
  }
  return plan
}

/**
 * Failover mode: failovers one after another, kills (-9) and pauses of the primary, and every
 * third a partition that leaves the primary with one client; with two replicas, every failover is
 * the stale replica's (verify/apply-failover.ts). `duration` is the budget a failover gets (a Sentinel promotion takes 3 to 5 s here),
 * `delayMs` how long the replica stays paused waiting for a grant it will miss.
 */
function planFailovers(options: ScheduleOptions): PlannedFault[] {
  const random = rng(options.seed)
  const plan: PlannedFault[] = []
  let at = random.int(200, 600)
  while (at < options.duration) {
    // Every third failover isolates the primary with one client instead (drawn the same, so the
    // kills and pauses of a seed stay where they were).
    const drawn: FaultKind = random.next() < 0.5 ? 'failover-kill' : 'failover-pause'
    const kind: FaultKind = options.replicaNodes === 2 ? 'failover-stale-replica' : plan.length % 3 === 2 ? 'failover-isolate' : drawn
    const resource = random.int(0, options.resources - 1)
    // Two replicas: `index` picks which one misses the grant (and is promoted).
    const index = options.replicaNodes === 2 ? random.int(0, 1) : 0
    plan.push({ id: plan.length + 1, at, kind, duration: FAILOVER_BUDGET_MS, index, resource, delayMs: random.int(600, 1_200), justPast: false })
    at += FAILOVER_BUDGET_MS + random.int(Math.round(options.ttl * 0.5), Math.round(options.ttl * 1.5))
  }
  return plan
}

/** The time the schedule sets aside for each failover (most take far less; the fault's end is recorded when it healed). */
export const FAILOVER_BUDGET_MS = 8_000
