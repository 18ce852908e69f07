// Starts workers/worker.ts as a separate OS process and reads its JSON-line reports.
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { AdapterName } from './clients.js'
import { nodeArgsFor } from './prebuilt.js'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const WORKER = fileURLToPath(new URL('./workers/worker.ts', import.meta.url))

export interface WorkerEvent {
  event: string
  /** performance.now() of this (test) process when the line arrived. */
  at: number
  [key: string]: unknown
}

export interface WorkerProcess {
  readonly pid: number
  readonly events: WorkerEvent[]
  /** The first not yet consumed event named `event` (waits for it, rejects after `timeoutMs`). */
  next(event: string, timeoutMs?: number): Promise<WorkerEvent>
  send(line: string): void
  signal(signal: NodeJS.Signals): void
  /** Resolves when the process has exited, with the time (performance.now()) it did. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>
  hasExited(): boolean
  stderr(): string
}

const live = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL')
})

/**
 * Starts a TypeScript program of the harness (`file`: its bundle, or run with tsx) as a separate OS process; it is
 * SIGKILLed with the test process, or by killAllWorkers.
 */
export function spawnTsx(file: string, args: readonly string[], stdio: 'ignore' | 'pipe' = 'pipe'): ChildProcess {
  const child = spawn(process.execPath, [...nodeArgsFor(file), ...args], { cwd: ROOT, stdio: [stdio, 'pipe', 'pipe'] })
  live.add(child)
  child.once('exit', () => live.delete(child))
  return child
}

export function spawnWorker(mode: string, adapter: AdapterName, url: string, params: Record<string, unknown> = {}): WorkerProcess {
  const child = spawn(process.execPath, [...nodeArgsFor(WORKER), mode, adapter, url, JSON.stringify(params)], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  live.add(child)
  const events: WorkerEvent[] = []
  const consumed = new Set<WorkerEvent>()
  const watchers = new Set<() => void>()
  let stderr = ''
  let buffered = ''
  let exited = false
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString()
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end)
      buffered = buffered.slice(end + 1)
      try {
        events.push({ ...(JSON.parse(line) as { event: string }), at: performance.now() })
      } catch {
        stderr += `[stdout] ${line}\n`
      }
    }
    for (const watch of [...watchers]) watch()
  })
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  child.stdin.on('error', () => {}) // the worker may be gone already
  const exitPromise = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = true
      live.delete(child)
      for (const watch of [...watchers]) watch()
      resolve({ code, signal, at: performance.now() })
    })
  })

  return {
    pid: child.pid ?? -1,
    events,
    next(event, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = events.find((e) => e.event === event && !consumed.has(e))
          if (found) {
            consumed.add(found)
            done()
            resolve(found)
          } else if (exited) {
            done()
            reject(new Error(`worker ${mode} exited before reporting "${event}"; events: ${JSON.stringify(events)}; stderr: ${stderr}`))
          }
        }
        const timer = setTimeout(() => {
          done()
          reject(new Error(`worker ${mode} did not report "${event}" within ${timeoutMs} ms; events: ${JSON.stringify(events)}; stderr: ${stderr}`))
        }, timeoutMs)
        const done = () => {
          clearTimeout(timer)
          watchers.delete(check)
        }
        watchers.add(check)
        check()
      })
    },
    send(line) {
      child.stdin.write(`${line}\n`)
    },
    signal(signal) {
      if (!exited) child.kill(signal)
    },
    exited: exitPromise,
    hasExited: () => exited,
    stderr: () => stderr,
  }
}

/** SIGKILLs every worker still running (for afterEach/afterAll). */
export async function killAllWorkers(): Promise<void> {
  const exits = [...live].map((child) => new Promise((resolve) => child.once('exit', resolve)))
  for (const child of live) {
    child.kill('SIGCONT')
    child.kill('SIGKILL')
  }
  await Promise.all(exits)
}
