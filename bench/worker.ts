// A benchmark worker process: `node --import tsx bench/worker.ts`, forked by bench/run.ts with an
// IPC channel. It runs one task at a time for the coordinator and answers with plain JSON.
import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { openLib, type Held, type LibSpec, type LockLib } from './libs.js'
import { openSemaphore } from './semaphore-libs.js'
import { clock, percentile, sleep } from './stats.js'
import { costTask, type CostTask } from './cost-tasks.js'
import { renewTask, type RenewTask } from './renew-tasks.js'
import { rwRun, transferRun, type RwTask, type TransferTask } from './transfer-tasks.js'
import { installWireCounter, messagesReceived, uncounted, wireByName, wireCount } from './wire.js'

installWireCounter()

export type Task =
  | { type: 'floor'; url: string; n: number }
  | { type: 'latency'; lib: LibSpec; urls: string[]; n: number; warmup: number; prefix: string }
  | { type: 'throughput'; lib: LibSpec; urls: string[]; concurrency: number; durationMs: number; prefix: string }
  | { type: 'contend-open'; lib: LibSpec; urls: string[]; semaphore?: SemaphoreTarget }
  | { type: 'contend-warm'; key: string; concurrency: number; startAt: number; ttl: number }
  | { type: 'contend-run'; key: string; counterKey: string; concurrency: number; startAt: number; endAt: number; ttl: number; worker: number; inside?: boolean }
  | { type: 'idle-start'; lib: LibSpec; urls: string[]; key: string; waiters: number; ttl: number; semaphore?: SemaphoreTarget }
  | { type: 'idle-snapshot' }
  | { type: 'idle-finish' }
  | { type: 'memory'; lib: LibSpec; urls: string[]; n: number; what: 'held' | 'waiter'; prefix: string }
  | TransferTask
  | RwTask
  | CostTask
  | RenewTask
  | { type: 'ready' }
  | { type: 'exit' }

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

interface Request {
  id: number
  task: Task
}

const clients: Redis[] = []

async function connect(urls: string[]): Promise<Redis[]> {
  const made = urls.map((url) => new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 }))
  await Promise.all(made.map((c) => c.connect()))
  clients.push(...made)
  return made
}

async function closeClients(): Promise<void> {
  const all = clients.splice(0)
  await Promise.all(all.map((c) => c.quit().catch(() => c.disconnect())))
}

// ------------------------------------------------------------------ tasks

async function floor(url: string, n: number) {
  const [c] = await connect([url])
  if (!c) throw new Error('no client')
  const ping: number[] = []
  const pair: number[] = []
  for (let i = 0; i < 200; i++) await c.ping()
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await c.ping()
    ping.push(performance.now() - t)
  }
  const script = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`
  for (let i = 0; i < n + 200; i++) {
    const key = `floor:${i}`
    const token = randomUUID()
    const t = performance.now()
    await c.set(key, token, 'PX', 10_000, 'NX')
    await c.eval(script, 1, key, token)
    if (i >= 200) pair.push(performance.now() - t)
  }
  await closeClients()
  return { pingP50: percentile(ping, 50), pingP99: percentile(ping, 99), pairP50: percentile(pair, 50), pairP99: percentile(pair, 99) }
}

async function latency(task: Extract<Task, { type: 'latency' }>) {
  const lib = openLib(task.lib, await connect(task.urls))
  const acquire: number[] = []
  const release: number[] = []
  for (let i = 0; i < task.warmup; i++) {
    const held = await lib.acquire(`${task.prefix}:w${i}`, 10_000, 5_000)
    await held.release()
  }
  const wire0 = wireCount()
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < task.n; i++) {
    const a = performance.now()
    const held = await lib.acquire(`${task.prefix}:${i}`, 10_000, 5_000)
    const b = performance.now()
    await held.release()
    release.push(performance.now() - b)
    acquire.push(b - a)
  }
  const elapsed = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  const wire = wireCount() - wire0
  await lib.close()
  await closeClients()
  return {
    cyclesPerSec: (task.n / elapsed) * 1000,
    acquireP50: percentile(acquire, 50),
    acquireP99: percentile(acquire, 99),
    releaseP50: percentile(release, 50),
    releaseP99: percentile(release, 99),
    wirePerCycle: wire / task.n,
    clientCpuUsPerCycle: (cpu.user + cpu.system) / task.n,
  }
}

async function throughput(task: Extract<Task, { type: 'throughput' }>) {
  const lib = openLib(task.lib, await connect(task.urls))
  let cycles = 0
  let stop = false
  const loop = async (w: number, counting: boolean) => {
    const key = `${task.prefix}:${w}`
    while (!stop) {
      const held = await lib.acquire(key, 10_000, 5_000)
      await held.release()
      if (counting) cycles++
    }
  }
  // Warm up (JIT, script cache), then measure a fixed wall-clock window.
  const warm = Array.from({ length: task.concurrency }, (_, w) => loop(w, false))
  await sleep(Math.min(300, task.durationMs / 3))
  stop = true
  await Promise.all(warm)
  stop = false
  const wire0 = wireCount()
  const t0 = performance.now()
  const loops = Array.from({ length: task.concurrency }, (_, w) => loop(w, true))
  await sleep(task.durationMs)
  stop = true
  await Promise.all(loops)
  const elapsed = performance.now() - t0
  const wire = wireCount() - wire0
  await lib.close()
  await closeClients()
  return { cyclesPerSec: (cycles / elapsed) * 1000, wirePerCycle: wire / cycles }
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
  const out: Sections = { who: [], acquired: [], releasing: [], released: [], wait: [], fence: [], wire: 0, cpuMs: 0, messages: 0, wireByName: {}, giveUps: 0, failedAcquires: 0, longestFailedWait: 0, errors: [] }
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

/** Heap bytes per held lease or per waiter. Needs --expose-gc; the process is discarded afterwards. */
async function memory(task: Extract<Task, { type: 'memory' }>) {
  const gc = (globalThis as { gc?: () => void }).gc
  if (!gc) throw new Error('memory task needs node --expose-gc')
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      await sleep(20)
      gc()
    }
    return process.memoryUsage().heapUsed
  }
  const lib = openLib(task.lib, await connect(task.urls))
  for (let i = 0; i < 200; i++) await (await lib.acquire(`${task.prefix}:warm:${i}`, 60_000, 1_000)).release()
  if (task.what === 'held') {
    const held: Held[] = []
    const before = await settle()
    for (let i = 0; i < task.n; i += 100) {
      const batch = Array.from({ length: Math.min(100, task.n - i) }, (_, j) => lib.acquire(`${task.prefix}:${i + j}`, 60_000, 5_000))
      held.push(...(await Promise.all(batch)))
    }
    const after = await settle()
    const bytes = (after - before) / task.n
    for (const h of held) await h.release()
    return { bytes }
  }
  const holder = await lib.acquire(`${task.prefix}:one`, 60_000, 5_000)
  const before = await settle()
  const waiting: Promise<unknown>[] = []
  for (let i = 0; i < task.n; i++) waiting.push(lib.acquire(`${task.prefix}:one`, 60_000, 60_000).catch(() => {}))
  await sleep(500) // every waiter has made its first attempt and is now parked (or polling)
  const after = await settle()
  void holder
  return { bytes: (after - before) / task.n }
}

async function handle(task: Task): Promise<unknown> {
  switch (task.type) {
    case 'floor':
      return floor(task.url, task.n)
    case 'latency':
      return latency(task)
    case 'throughput':
      return throughput(task)
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
    case 'memory':
      return memory(task)
    case 'transfer-run':
      return transferRun(task)
    case 'rw-run':
      return rwRun(task)
    case 'floor-listen':
    case 'floor-publish':
    case 'floor-collect':
    case 'keyspace-open':
    case 'keyspace-run':
    case 'touch':
      return costTask(task)
    case 'renew-start':
    case 'renew-hold':
    case 'renew-finish':
      return renewTask(task)
    case 'ready':
      return {}
    case 'exit':
      setImmediate(() => process.exit(0))
      return {}
  }
}

if (!process.send) {
  console.error('bench/worker.ts is started by bench/run.ts (npm run bench), with an IPC channel')
  process.exit(2)
}
process.on('message', (message: Request) => {
  handle(message.task).then(
    (result) => process.send?.({ id: message.id, ok: true, result }),
    (err: unknown) => process.send?.({ id: message.id, ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }),
  )
})
// The coordinator went away (crash, Ctrl-C): never linger.
process.on('disconnect', () => process.exit(0))
