// The worker side of the uncontended scenarios (bench/worker.ts hands these tasks over): the
// round-trip floor, A (sequential acquire+release), B (concurrent cycles) and F (heap per item).
import { createHook } from 'node:async_hooks'
import { randomUUID } from 'node:crypto'
import { Session } from 'node:inspector/promises'
import { openLib, type Held, type LibSpec } from './libs.js'
import { percentile, sleep } from './stats.js'
import { wireCount } from './wire.js'
import { closeClients, connect } from './worker-clients.js'

export type LatencyTask =
  | { type: 'floor'; url: string; n: number }
  | {
      type: 'latency'
      lib: LibSpec
      urls: string[]
      n: number
      warmup: number
      prefix: string
      /**
       * false: no promise count or heap sample after the timed cycles. Both switch on V8 machinery
       * (promise hooks, the inspector's sampling heap profiler) that deoptimizes the code warmed so
       * far, so a timed run that follows them in this process would measure the re-warming.
       */
      made?: boolean
    }
  | {
      type: 'throughput'
      lib: LibSpec
      urls: string[]
      concurrency: number
      /** Each worker cycles over this many keys of its own (1: one key each). */
      keysPerWorker: number
      /** The acquire's wait (0: one attempt, tryAcquire). */
      wait: number
      durationMs: number
      prefix: string
    }
  | { type: 'memory'; lib: LibSpec; urls: string[]; n: number; what: 'held' | 'waiter'; prefix: string }

type Task = LatencyTask

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
  const made = task.made === false ? {} : await madePerCycle((i) => lib.acquire(`${task.prefix}:made:${i}`, 10_000, 5_000).then((held) => held.release()))
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
    ...made,
  }
}

/** Cycles counted for promises and sampled for allocations, after the timed ones (neither slows those). */
const MADE_CYCLES = 500
/** Heap sampling interval, bytes: small, so that the sampled bytes estimate the allocated ones closely. */
const SAMPLE_BYTES = 64

/**
 * What one sequential acquire+release makes, the client library's own work included: promises
 * (async_hooks: every promise created, exact) and bytes allocated on the JS heap (V8's sampling
 * heap profiler, every SAMPLE_BYTES on average: an estimate), each per cycle over MADE_CYCLES.
 */
async function madePerCycle(cycle: (i: number) => Promise<unknown>): Promise<{ promisesPerCycle: number; heapBytesPerCycle: number; objectsPerCycle: number }> {
  let promises = 0
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE') promises++
    },
  })
  hook.enable()
  for (let i = 0; i < MADE_CYCLES; i++) await cycle(i)
  hook.disable()
  const session = new Session()
  session.connect()
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: SAMPLE_BYTES,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  })
  for (let i = 0; i < MADE_CYCLES; i++) await cycle(MADE_CYCLES + i)
  const { profile } = await session.post('HeapProfiler.stopSampling')
  session.disconnect()
  const bytes = sampledBytes(profile.head)
  const objects = sampledObjects((profile as { samples?: { size: number }[] }).samples ?? [])
  return { promisesPerCycle: promises / MADE_CYCLES, heapBytesPerCycle: bytes / MADE_CYCLES, objectsPerCycle: objects / MADE_CYCLES }
}

interface SampledNode {
  selfSize: number
  children: SampledNode[]
}

/**
 * The objects a sampling heap profile's samples stand for: the profiler samples an allocation of
 * `size` bytes with probability 1 - e^(-size/SAMPLE_BYTES) (its sample points are a Poisson
 * process), so each sample counts for 1 / that many objects of its size, as V8 itself scales the
 * bytes of its call tree.
 */
const sampledObjects = (samples: readonly { size: number }[]): number => samples.reduce((sum, { size }) => sum + 1 / (1 - Math.exp(-size / SAMPLE_BYTES)), 0)

/** The bytes a sampling heap profile's call tree attributes, all nodes together. */
const sampledBytes = (node: SampledNode): number => node.children.reduce((sum, child) => sum + sampledBytes(child), node.selfSize)

async function throughput(task: Extract<Task, { type: 'throughput' }>) {
  const clients = await connect(task.urls)
  const lib = openLib(task.lib, clients)
  let cycles = 0
  let stop = false
  const loop = async (w: number, counting: boolean) => {
    for (let i = 0; !stop; i++) {
      const held = await lib.acquire(`${task.prefix}:${w}:${i % task.keysPerWorker}`, 10_000, task.wait)
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
  const redis0 = await redisCpuUs(clients[0]!)
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const loops = Array.from({ length: task.concurrency }, (_, w) => loop(w, true))
  await sleep(task.durationMs)
  stop = true
  await Promise.all(loops)
  const elapsed = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  const redisUs = (await redisCpuUs(clients[0]!)) - redis0
  const wire = wireCount() - wire0
  await lib.close()
  await closeClients()
  return {
    cyclesPerSec: (cycles / elapsed) * 1000,
    wirePerCycle: wire / cycles,
    clientCpuUsPerCycle: (cpu.user + cpu.system) / cycles,
    redisCpuUsPerCycle: redisUs / cycles,
  }
}

/** The server's CPU time so far (user + sys), µs, from INFO cpu. */
async function redisCpuUs(client: { info(section: string): Promise<string> }): Promise<number> {
  const info = await client.info('cpu')
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? Number.NaN)
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6
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

export async function latencyTask(task: LatencyTask): Promise<unknown> {
  switch (task.type) {
    case 'floor':
      return floor(task.url, task.n)
    case 'latency':
      return latency(task)
    case 'throughput':
      return throughput(task)
    case 'memory':
      return memory(task)
  }
}
