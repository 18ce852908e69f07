// The history: one JSON object per line, written by the orchestrator as events arrive from the
// workers (over their stdout) and from the nemesis. Times are `clockOrigin + performance.now()` in
// ms: the wall clock at the start, then the monotonic clock, the same in every local process.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'

/**
 * The wall-clock time at which `performance.now()` was 0, to a few microseconds. Not
 * `performance.timeOrigin`: Node reads it from two clocks one after the other at the process's
 * start, and on a loaded machine the process can be descheduled between the two reads (a failover
 * run here, three runs on two cores, had one worker's times 10 ms ahead of the others', which made
 * every handoff from it look like a double grant). `Date.now()` read just before `performance.now()`
 * gives at most the true origin (it is floored to the ms, and the second read comes later); the
 * largest difference over a few ms of samples, each ms boundary crossed, is the origin.
 */
export const clockOrigin: number = (() => {
  let best = Number.NEGATIVE_INFINITY
  let ticks = 0
  let lastWall = Date.now()
  const until = performance.now() + 50
  while (ticks < 3 && performance.now() < until) {
    const wall = Date.now()
    const mono = performance.now()
    if (wall !== lastWall) {
      ticks++
      lastWall = wall
    }
    if (wall - mono > best) best = wall - mono
  }
  return best
})()

export const now = (): number => clockOrigin + performance.now()

/** How far apart two processes of one machine may read `now` at one moment: a millisecond's doubt, and some. */
export const CLOCK_MARGIN_MS = 10

/** When a server clock jumped forward (the end of each clock fault): every key there expired early then (DESIGN.md 3). */
export const clockJumps = (faults: readonly FaultEvent[]): FaultEvent[] => faults.filter((f) => f.fault === 'clock' && f.phase === 'end')

/**
 * CLOCK_MONOTONIC in ms (`process.hrtime`), the same in every process of the machine. The semaphore
 * mode compares intervals of different processes to the millisecond (how many permits were
 * believed valid at once), where `performance.timeOrigin`, sampled at each process's start, was
 * measured to differ by up to ~1 ms between processes.
 */
export const monotonicNow = (): number => Number(process.hrtime.bigint()) / 1e6

/** What an operation did. `invoke` opens it; `ok`, `fail` (certainly had no effect) or `info` (outcome unknown) close it. */
export type OpType = 'invoke' | 'ok' | 'fail' | 'info'

/**
 * Operations of a worker: take the lock, claim the rows, read, write (SQL), fenced set (Redis),
 * release; in semaphore mode also `work` (one unit of protected work under a permit) and `extend`;
 * in election mode `acquire` is a campaign, `release` a resignation, and `observe` one state an
 * observer yielded (`value`: `{ fence, version, leader }`, `leader` null for a vacancy), and
 * `proclaim` a leader's new value in its term.
 */
export type OpName = 'acquire' | 'claim' | 'read' | 'write' | 'fset' | 'release' | 'probe' | 'work' | 'extend' | 'observe' | 'proclaim'

export interface OpEvent {
  kind: 'op'
  type: OpType
  f: OpName
  /** 'w3' for worker slot 3 (a respawned worker keeps its slot), 'probe' for the orchestrator. */
  worker: string
  pid: number
  resource: string
  fence?: number
  time: number
  /** Operation-specific payload: balances read, amounts written, error code, released flag... */
  value?: unknown
  error?: string
}

/** A worker saw its lease's signal abort. */
export interface LostEvent {
  kind: 'lost'
  worker: string
  pid: number
  resource: string
  fence: number
  reason: string
  time: number
}

export type FaultKind =
  | 'pause-worker'
  | 'kill-worker'
  | 'kill-redis'
  | 'partition'
  | 'delay'
  | 'script-flush'
  | 'reconnect'
  | 'clock'
  /** Failover mode: the primary killed -9 (or paused) just after a grant its replica missed, the replica promoted. */
  | 'failover-kill'
  | 'failover-pause'
  | 'failover-isolate'
  /** Two replicas: the grant acknowledged by one replica only, that one stopped, the other (which lacks it) promoted. */
  | 'failover-stale-replica'

/** A fault the nemesis injected: `start` and `end` (instant faults have both at once). */
export interface FaultEvent {
  kind: 'fault'
  phase: 'start' | 'end'
  fault: FaultKind
  /** 'w2', 'redis1', ... */
  target: string
  id: number
  time: number
  detail?: string
}

/** Phase changes of the run and the worker lifecycle (spawn, exit). */
export interface MetaEvent {
  kind: 'meta'
  what: 'phase' | 'spawn' | 'exit'
  name: string
  time: number
  pid?: number
  detail?: string
}

export type HistoryEvent = OpEvent | LostEvent | FaultEvent | MetaEvent

export class HistoryWriter {
  readonly path: string
  readonly events: HistoryEvent[] = []
  #buffer: string[] = []

  constructor(path: string) {
    this.path = path
    writeFileSync(path, '')
  }

  add(event: HistoryEvent): void {
    this.events.push(event)
    this.#buffer.push(JSON.stringify(event))
    if (this.#buffer.length >= 200) this.flush()
  }

  flush(): void {
    if (this.#buffer.length === 0) return
    appendFileSync(this.path, `${this.#buffer.join('\n')}\n`)
    this.#buffer = []
  }
}

export function readHistory(path: string): HistoryEvent[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as HistoryEvent)
}
