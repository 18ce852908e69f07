// The coordinator's side of the worker processes: fork, send a task, await its answer, clean up.
import { fork, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Task } from './worker.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const live = new Set<ChildProcess>()

process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL')
})

interface Reply {
  id: number
  ok: boolean
  result?: unknown
  error?: string
}

export class Worker {
  readonly #child: ChildProcess
  readonly #pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>()
  #next = 0
  #exited = false

  /** `node [--expose-gc] --import tsx bench/worker.ts`, with an IPC channel. */
  constructor(options: { exposeGc?: boolean } = {}) {
    const execArgv = ['--import', 'tsx']
    if (options.exposeGc) execArgv.unshift('--expose-gc')
    // BENCH_CPU_PROF=dir: every worker writes a V8 CPU profile there when it exits (for profiling runs).
    const profileDir = process.env.BENCH_CPU_PROF
    if (profileDir) execArgv.unshift('--cpu-prof', `--cpu-prof-dir=${profileDir}`)
    // BENCH_WORKER_FLAGS="--trace-gc ...": more node flags for every worker (NODE_OPTIONS refuses some).
    const extra = process.env.BENCH_WORKER_FLAGS?.split(/\s+/).filter(Boolean) ?? []
    execArgv.unshift(...extra)
    this.#child = fork(path.join(here, 'worker.ts'), [], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    live.add(this.#child)
    this.#child.on('message', (reply: Reply) => {
      const waiter = this.#pending.get(reply.id)
      if (!waiter) return
      this.#pending.delete(reply.id)
      if (reply.ok) waiter.resolve(reply.result)
      else waiter.reject(new Error(reply.error ?? 'worker task failed'))
    })
    this.#child.once('exit', (code, signal) => {
      this.#exited = true
      live.delete(this.#child)
      for (const waiter of this.#pending.values()) waiter.reject(new Error(`worker exited (${signal ?? code}) during a task`))
      this.#pending.clear()
    })
  }

  run<T>(task: Task): Promise<T> {
    if (this.#exited) return Promise.reject(new Error('worker has exited'))
    const id = ++this.#next
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject })
      this.#child.send({ id, task })
    })
  }

  /** Asks the worker to exit; SIGKILL if it has not after 3 s (a peer library may keep timers alive). */
  async stop(): Promise<void> {
    if (this.#exited) return
    const exited = new Promise<void>((resolve) => this.#child.once('exit', () => resolve()))
    this.run({ type: 'exit' }).catch(() => {})
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 3_000)
    await exited
    clearTimeout(timer)
  }

  kill(): void {
    if (!this.#exited) this.#child.kill('SIGKILL')
  }
}

/** A set of worker processes kept across scenarios (forking one costs ~0.5 s of CPU). */
export class Pool {
  readonly #workers: Worker[] = []

  async take(n: number): Promise<Worker[]> {
    while (this.#workers.length < n) this.#workers.push(new Worker())
    return this.#workers.slice(0, n)
  }

  async shrink(n: number): Promise<void> {
    const extra = this.#workers.splice(n)
    await Promise.all(extra.map((w) => w.stop()))
  }

  async close(): Promise<void> {
    await this.shrink(0)
  }
}
