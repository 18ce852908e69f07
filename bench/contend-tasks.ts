// The worker side of the contended and idle scenarios (C, D, E, S, quorum; bench/worker.ts hands
// these tasks over): open the library, warm it up, run the sections until the shared end time;
// or park waiters and report what waiting cost.
import type { Redis } from 'ioredis'
import { openLib, type Held, type LibSpec, type LockLib } from './libs.js'
import { openSemaphore } from './semaphore-libs.js'
import { clock, sleep } from './stats.js'
import { messagesReceived, uncounted, wireByName, wireCount } from './wire.js'
import { closeClients, connect } from './worker-clients.js'

export type ContendTask =
  | { type: 'contend-open'; lib: LibSpec; urls: string[]; semaphore?: SemaphoreTarget }
  | { type: 'contend-warm'; key: string; concurrency: number; startAt: number; ttl: number }
  | { type: 'contend-run'; key: string; counterKey: string; concurrency: number; startAt: number; endAt: number; ttl: number; worker: number; inside?: boolean }
  | { type: 'idle-start'; lib: LibSpec; urls: string[]; key: string; waiters: number; ttl: number; semaphore?: SemaphoreTarget }
  | { type: 'idle-snapshot' }
  | { type: 'idle-finish' }

type Task = ContendTask

/** Scenario S: the tasks take permits of this semaphore instead of locking a key. */
export interface SemaphoreTarget {
  name: string
  limit: number
}

/** Sections of one contending process, as parallel arrays (cheap to send over IPC). */
export interface Sections {
  /** Waiter id (process-unique index in the run) of each section. */
  who: number[]
  /** Shared-clock ms: acquire resolved. */
  acquired: number[]
  /** Shared-clock ms: release about to be sent. */
  releasing: number[]
  /** Shared-clock ms: release answered. */
  released: number[]
  /** ms from the acquire call to its resolution. */
  wait: number[]
  fence: (number | null)[]
  wire: number
  /** CPU (user+system) of this process over the run, ms. */
  cpuMs: number
  /** Pub/sub messages this process received over the run. */
  messages: number
  /** Wire commands by name over the run (only filled when BENCH_WIRE_DEBUG is set). */
  wireByName: Record<string, number>
  giveUps: number
  /** Acquires that failed for good (timed out or threw). */
  failedAcquires: number
  /** How long the longest failed acquire waited before it failed, ms. */
  longestFailedWait: number
  errors: string[]
  /** `inside` runs only: the most holders the protected side counted at once (its INCR's reply). */
  maxInside?: number
}

// A contended run is split in two so that every process has connected and loaded its libraries
// before the shared start time.
let contendLib: LockLib | undefined
let counter: Redis | undefined

async function contendOpen(task: Extract<Task, { type: 'contend-open' }>) {
  const made = await connect(task.urls)
  contendLib = task.semaphore ? openSemaphore(task.lib, made, task.semaphore.name, task.semaphore.limit) : openLib(task.lib, made)
  const [c] = await connect(task.urls.slice(0, 1))
  counter = c && uncounted(c)
  return {}
}

/** One acquire+release per waiter, all processes at once: opens lazy connections (pub/sub) before counting. */
async function contendWarm(task: Extract<Task, { type: 'contend-warm' }>) {
  const lib = contendLib
  if (!lib) throw new Error('contend-warm before contend-open')
  await sleep(Math.max(0, task.startAt - clock()))
  const errors: string[] = []
  await Promise.all(
    Array.from({ length: task.concurrency }, async () => {
      try {
        const held = await lib.acquire(task.key, task.ttl, 30_000)
        await held.release()
      } catch (err) {
        errors.push(`warm-up: ${String(err)}`)
      }
    }),
  )
  lib.giveUps = 0
  return { errors: errors.slice(0, 3) }
}

async function contendRun(task: Extract<Task, { type: 'contend-run' }>): Promise<Sections> {
  const lib = contendLib
  const ctr = counter
  if (!lib || !ctr) throw new Error('contend-run before contend-open')
  const out: Sections = {
    who: [],
    acquired: [],
    releasing: [],
    released: [],
    wait: [],
    fence: [],
    wire: 0,
    cpuMs: 0,
    messages: 0,
    wireByName: {},
    giveUps: 0,
    failedAcquires: 0,
    longestFailedWait: 0,
    errors: [],
  }
  await sleep(Math.max(0, task.startAt - clock()))
  const cpu0 = process.cpuUsage()
  const wire0 = wireCount()
  const messages0 = messagesReceived()
  const names0 = wireByName()
  const loop = async (w: number) => {
    const who = task.worker * 100_000 + w
    while (clock() < task.endAt) {
      const called = clock()
      let held: Held
      try {
        // Long enough to see a stall of a whole ttl inside the window, bounded so the run ends.
        held = await lib.acquire(task.key, task.ttl, Math.ceil(Math.max(5_000, task.endAt - called + 3_000)))
      } catch (err) {
        out.failedAcquires++
        out.longestFailedWait = Math.max(out.longestFailedWait, clock() - called)
        if (out.errors.length < 5) out.errors.push(String(err))
        continue
      }
      const acquired = clock()
      if (task.inside) {
        // A semaphore's protected work: the protected side counts its holders (INCR on the way in,
        // DECR on the way out) and must never count more than the limit.
        const inside = await ctr.incr(task.counterKey)
        out.maxInside = Math.max(out.maxInside ?? 0, inside)
        await ctr.decr(task.counterKey)
      } else {
        // The protected work: a read-modify-write that is only correct under mutual exclusion.
        const value = Number(await ctr.get(task.counterKey))
        await ctr.set(task.counterKey, value + 1)
      }
      const releasing = clock()
      await held.release()
      out.who.push(who)
      out.acquired.push(acquired)
      out.releasing.push(releasing)
      out.released.push(clock())
      out.wait.push(acquired - called)
      out.fence.push(held.fence ?? null)
    }
  }
  await Promise.all(Array.from({ length: task.concurrency }, (_, w) => loop(w)))
  out.wire = wireCount() - wire0
  out.messages = messagesReceived() - messages0
  const cpu = process.cpuUsage(cpu0)
  out.cpuMs = (cpu.user + cpu.system) / 1000
  if (process.env.BENCH_WIRE_DEBUG) {
    for (const [name, n] of Object.entries(wireByName())) if (n - (names0[name] ?? 0) > 0) out.wireByName[name] = n - (names0[name] ?? 0)
  }
  out.giveUps = lib.giveUps
  await lib.close()
  contendLib = undefined
  counter = undefined
  await closeClients()
  return out
}

let idle: { lib: LockLib; cpu: NodeJS.CpuUsage; wire: number; done: Promise<unknown> } | undefined

async function idleStart(task: Extract<Task, { type: 'idle-start' }>) {
  const made = await connect(task.urls)
  const lib = task.semaphore ? openSemaphore(task.lib, made, task.semaphore.name, task.semaphore.limit) : openLib(task.lib, made)
  const cpu = process.cpuUsage()
  const wire = wireCount()
  const done = Promise.all(
    Array.from({ length: task.waiters }, async () => {
      const held = await lib.acquire(task.key, task.ttl, 60_000)
      await held.release()
    }),
  )
  idle = { lib, cpu, wire, done }
  return {}
}

function idleSnapshot() {
  if (!idle) throw new Error('idle-snapshot before idle-start')
  const cpu = process.cpuUsage(idle.cpu)
  return { cpuMs: (cpu.user + cpu.system) / 1000, wire: wireCount() - idle.wire, giveUps: idle.lib.giveUps }
}

async function idleFinish() {
  if (!idle) throw new Error('idle-finish before idle-start')
  await idle.done
  await idle.lib.close()
  idle = undefined
  await closeClients()
  return {}
}

export async function contendTask(task: ContendTask): Promise<unknown> {
  switch (task.type) {
    case 'contend-open':
      return contendOpen(task)
    case 'contend-warm':
      return contendWarm(task)
    case 'contend-run':
      return contendRun(task)
    case 'idle-start':
      return idleStart(task)
    case 'idle-snapshot':
      return idleSnapshot()
    case 'idle-finish':
      return idleFinish()
  }
}
