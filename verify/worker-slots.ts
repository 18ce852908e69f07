// The run's worker processes, one per slot: spawned with their config, their JSON lines handed to
// the run, replaced when one dies on its own, killed at the end.
import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { workerName, type WorkerConfig } from './config.js'
import type { HistoryEvent, HistoryWriter } from './history.js'
import { nodeArgsFor } from '../harness/prebuilt.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const repoRoot = path.resolve(here, '..')

export interface Slot {
  slot: number
  generation: number
  child: ChildProcess | undefined
  paused: boolean
}

export interface WorkerSlotsOptions {
  /** The worker's file in verify/. */
  script: string
  config: (slot: Slot) => WorkerConfig
  history: HistoryWriter
  now: () => number
  /** Each event a worker prints. */
  record: (event: HistoryEvent) => void
}

export class WorkerSlots {
  readonly slots: Slot[] = []
  /** What went wrong in the workers themselves (a crash, an unparsable line). */
  readonly errors: string[] = []
  /** Set once the run stops: no exit is a crash then, and nothing is respawned. */
  stopping = false
  // Children the nemesis or the stop phase killed: their exit is not a crash. Per child, not per
  // slot: under load the exit of a killed worker can arrive after its replacement was spawned.
  readonly #killed = new WeakSet<ChildProcess>()

  constructor(private readonly o: WorkerSlotsOptions) {}

  start(count: number): void {
    for (let i = 0; i < count; i++) {
      const slot: Slot = { slot: i, generation: 0, child: undefined, paused: false }
      this.slots.push(slot)
      this.spawn(slot)
    }
  }

  /** Marks `child` as killed on purpose: its exit is not a crash. */
  killing(child: ChildProcess): void {
    this.#killed.add(child)
  }

  spawn(slot: Slot): void {
    const { history, now } = this.o
    slot.paused = false
    const child = spawn(process.execPath, [...nodeArgsFor(path.join(here, this.o.script)), JSON.stringify(this.o.config(slot))], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    slot.child = child
    const name = workerName(slot.slot)
    history.add({ kind: 'meta', what: 'spawn', name, time: now(), ...(child.pid ? { pid: child.pid } : {}) })
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        this.o.record(JSON.parse(line) as HistoryEvent)
      } catch {
        this.errors.push(`${name}: unparsable line ${line.slice(0, 200)}`)
      }
    })
    let stderr = ''
    child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2_000)))
    child.once('exit', (code, signal) => {
      history.add({ kind: 'meta', what: 'exit', name, time: now(), ...(child.pid ? { pid: child.pid } : {}), detail: signal ?? `code ${code}` })
      if (slot.child === child) slot.child = undefined
      if (!this.#killed.has(child) && !this.stopping && slot.child === undefined) {
        // A worker that dies on its own is a finding in itself: keep its last words, replace it.
        this.errors.push(`${name} (pid ${child.pid}) exited unexpectedly (${signal ?? `code ${code}`}): ${stderr.trim().slice(-600)}`)
        slot.generation++
        setTimeout(() => !this.stopping && this.spawn(slot), 200)
      }
    })
  }

  /** The stop phase: kill -9 every worker and wait until each has exited. */
  async killAll(): Promise<void> {
    this.stopping = true
    await Promise.all(
      this.slots.map(async (slot) => {
        const child = slot.child
        if (!child) return
        this.#killed.add(child)
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
        child.kill('SIGKILL')
        await exited
      }),
    )
  }

  /** Whatever happened: no worker outlives the run, paused or not. */
  forceKillAll(): void {
    this.stopping = true
    for (const slot of this.slots) {
      slot.child?.kill('SIGCONT')
      slot.child?.kill('SIGKILL')
    }
  }
}
