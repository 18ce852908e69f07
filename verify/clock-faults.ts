// Server clock faults (DESIGN.md 18): the Redis nodes run under libfaketime (harness/faketime.ts)
// and the nemesis steps one node's wall clock back by minutes, holds it there for a while, then
// jumps it forward, so every key there expires early (DESIGN.md 3). In the guarded run the jump
// forward overshoots the real clock by a few ttls, so the clock is never again behind a time it has
// shown: a restart empty later in the run still floors the fence by TIME. The control keeps the
// fence keys short (`fenceRetention`) and jumps forward by more than that but less than the step
// back, so every fence key expires while the clock is still minutes behind the last fence: the next
// fences are smaller, and the checker must say so.
import type { ServerClock } from '../harness/faketime.js'
import type { FaultEvent, HistoryWriter } from './history.js'
import type { PlannedFault } from './nemesis.js'
import { rng } from './rng.js'

/** A run with clock faults: the nodes run under libfaketime. */
export interface ClockRun {
  /** 'steps': back by minutes, then forward past the real clock. 'past-retention': the control, see above. */
  kind: 'steps' | 'past-retention'
  /** The workers' fenceRetention, ms (absent: the library's default, a day). */
  fenceRetention?: number
}

/** The control's fenceRetention: far below the step back. */
export const CONTROL_FENCE_RETENTION = 2_000

const MINUTE = 60_000

/**
 * `plan` with one clock fault added after the fault nearest a third of the way in (at once if the
 * plan is empty), every later fault moved back by the time it takes, so that it overlaps nothing:
 * one fault at a time. Drawn from its own stream of the seed, so the other faults stay as they were.
 */
export function withClockFault(plan: PlannedFault[], o: { seed: number; duration: number; ttl: number; nodes: number; clock: ClockRun }): PlannedFault[] {
  const random = rng(o.seed * 31 + 17)
  const back = random.int(2 * MINUTE, 5 * MINUTE)
  const held = random.int(o.ttl, 2 * o.ttl)
  const forward =
    o.clock.kind === 'steps' ? back + random.int(2 * o.ttl, 10_000) : random.int((o.clock.fenceRetention ?? CONTROL_FENCE_RETENTION) + 1_000, 20_000)
  const after = plan.findIndex((f) => f.at >= o.duration / 3)
  const cut = after === -1 ? plan.length : after
  const previous = plan[cut - 1]
  const at = (previous ? previous.at + previous.duration : 0) + random.int(Math.round(o.ttl * 0.3), o.ttl)
  const shift = held + random.int(Math.round(o.ttl * 0.3), o.ttl)
  const fault: PlannedFault = {
    id: plan.length + 1,
    at,
    kind: 'clock',
    duration: held,
    index: random.int(0, o.nodes - 1),
    resource: 0,
    delayMs: 0,
    justPast: false,
    clock: { back, forward },
  }
  const next = plan[cut]
  const delta = next ? Math.max(0, at + shift - next.at) : 0
  return [...plan.slice(0, cut), fault, ...plan.slice(cut).map((f) => ({ ...f, at: f.at + delta }))]
}

const seconds = (ms: number) => `${ms < 0 ? '−' : '+'}${(Math.abs(ms) / 1000).toFixed(1)} s`

/** Steps node `f.index`'s clock back, waits `f.duration`, then jumps it forward; both ends in the history. */
export async function stepClock(t: { clocks: ServerClock[]; history: HistoryWriter; now: () => number }, f: PlannedFault): Promise<void> {
  const clock = t.clocks[f.index]
  if (!clock || !f.clock) return
  const record = (phase: 'start' | 'end', detail: string) => {
    const event: FaultEvent = { kind: 'fault', phase, fault: 'clock', target: `redis${f.index}`, id: f.id, time: t.now(), detail }
    t.history.add(event)
  }
  clock.step(-f.clock.back)
  record('start', `server clock ${seconds(-f.clock.back)}, now ${seconds(clock.offsetMs)} off; jumps ${seconds(f.clock.forward)} after ${f.duration} ms`)
  await new Promise<void>((resolve) => setTimeout(resolve, f.duration))
  clock.step(f.clock.forward)
  record('end', `server clock ${seconds(f.clock.forward)}, now ${seconds(clock.offsetMs)} off`)
}
