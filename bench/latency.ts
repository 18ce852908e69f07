// The uncontended scenarios: the round-trip floor, A (latency of one worker's acquire+release
// cycles, and telemetry's cost) and B (throughput of 50 concurrent workers in one process).
import { chosen, SINGLE, type Config } from './bench-config.js'
import { libLabel, type LibKind, type LibSpec } from './libs.js'
import type { Pool, Worker } from './pool.js'
import { counters, delta, type Server } from './redis.js'

/**
 * Scenario A: the single-node libraries, and fencelock again with a subscriber on every
 * `fencelock:*` diagnostics channel, in the same interleaved rounds (telemetry's cost).
 */
export const LATENCY: LibSpec[] = [SINGLE[0]!, { kind: 'fencelock', telemetry: true }, ...SINGLE.slice(1), { kind: 'fencelock-scripts' }]
/** B: the single-node libraries, and fencelock's scripts sent by hand as a reference row. */
export const THROUGHPUT: LibSpec[] = [...SINGLE, { kind: 'fencelock-scripts' }]

const log = (line: string) => process.stderr.write(`${line}\n`)

export interface FloorRow {
  pingP50: number
  pingP99: number
  pairP50: number
  pairP99: number
}

export async function floor(pool: Pool, server: Server, cfg: Config): Promise<FloorRow> {
  const [w] = await pool.take(1)
  return w!.run<FloorRow>({ type: 'floor', url: server.url, n: cfg.latencyN })
}

export interface LatencyRow {
  lib: LibKind
  label: string
  cyclesPerSec: number
  acquireP50: number
  acquireP99: number
  releaseP50: number
  releaseP99: number
  wirePerCycle: number
  clientCpuUsPerCycle: number
  /** INFO cpu (user+sys) of the Redis server per cycle, µs. */
  redisCpuUsPerCycle: number
  /** Promises created per cycle, the client library's included (async_hooks, exact; a round of its own after the timed one). */
  promisesPerCycle?: number
  /** Bytes allocated on the JS heap per cycle (V8 sampling heap profiler: an estimate). */
  heapBytesPerCycle?: number
  /** Objects allocated on the JS heap per cycle (the same samples, each scaled by its chance of being sampled: an estimate). */
  objectsPerCycle?: number
  /** All rounds' cycles/s, in order; the row shows the median round. */
  rounds: number[]
  /** All rounds' client CPU µs per cycle, in order (A). */
  cpuRounds?: number[]
  /** fencelock with a subscriber on every diagnostics channel (A). */
  telemetry?: boolean
}

export async function uncontendedLatency(pool: Pool, server: Server, cfg: Config): Promise<LatencyRow[]> {
  const [w] = await pool.take(1)
  const all = new Map<string, LatencyRow[]>()
  // One unmeasured pass per library first: the first library of round 1 would otherwise run on a
  // colder JIT than the rest (in a quick run, one round, it made fencelock's CPU per cycle ~1.5x;
  // in one process fencelock's CPU per cycle still fell from 189 to 73 µs over its first ~10,000).
  for (const lib of chosen(cfg, LATENCY)) {
    await w!.run({ type: 'latency', lib, urls: [server.url], n: Math.min(3_000, cfg.latencyN), warmup: 0, prefix: `a:warm:${lib.kind}`, made: false })
    await server.admin.flushall()
  }
  for (let round = 0; round < cfg.latencyRounds; round++) {
    // Round-robin over the libraries, so slow drift in machine load hits all of them alike; every
    // other round in reverse, so no library always runs first (a colder JIT) or right after another.
    const order = chosen(cfg, LATENCY)
    for (const lib of round % 2 === 0 ? order : [...order].reverse()) {
      const label = libLabel(lib)
      const before = await counters(server)
      const measured = await w!.run<Omit<LatencyRow, 'lib' | 'label' | 'rounds' | 'redisCpuUsPerCycle'>>({
        type: 'latency',
        lib,
        urls: [server.url],
        n: cfg.latencyN,
        warmup: Math.min(500, cfg.latencyN / 5),
        prefix: `a:${lib.kind}:${round}`,
        made: false,
      })
      // Server CPU over warm-up and measurement alike, per cycle: the cost of the scripts themselves.
      const used = delta(await counters(server), before)
      const r = { ...measured, redisCpuUsPerCycle: (used.cpuMs * 1000) / (cfg.latencyN + Math.min(500, cfg.latencyN / 5)) }
      await server.admin.flushall()
      const list = all.get(label) ?? []
      list.push({ lib: lib.kind, label, ...(lib.telemetry ? { telemetry: true } : {}), ...r, rounds: [] })
      all.set(label, list)
      log(`  A ${label} round ${round + 1}: ${Math.round(r.cyclesPerSec)} cycles/s, ${r.clientCpuUsPerCycle.toFixed(1)} µs client CPU/cycle`)
    }
  }
  // Promises and heap per cycle last, one pass per library: they deoptimize what the JIT had warmed
  // (promise hooks, the sampling heap profiler), so no timed round may follow them in this process.
  type Made = Required<Pick<LatencyRow, 'promisesPerCycle' | 'heapBytesPerCycle' | 'objectsPerCycle'>>
  const made = new Map<string, Made>()
  for (const lib of chosen(cfg, LATENCY)) {
    const r = await w!.run<Made>({
      type: 'latency',
      lib,
      urls: [server.url],
      // Its own timed cycles (not used) re-warm the code the previous library's pass deoptimized,
      // so the heap sample sees what optimized code allocates, as in a running service.
      n: Math.min(2_000, cfg.latencyN),
      warmup: 0,
      prefix: `a:made:${lib.kind}`,
    })
    // Only the three counts: the pass's own timings must not replace the median round's.
    made.set(libLabel(lib), { promisesPerCycle: r.promisesPerCycle, heapBytesPerCycle: r.heapBytesPerCycle, objectsPerCycle: r.objectsPerCycle })
    await server.admin.flushall()
  }
  return [...all.entries()].map(([label, rounds]) => ({
    ...medianRound(rounds),
    ...made.get(label),
    cpuRounds: rounds.map((x) => x.clientCpuUsPerCycle),
  }))
}

export interface ThroughputRow {
  lib: LibKind
  label: string
  cyclesPerSec: number
  wirePerCycle: number
  clientCpuUsPerCycle: number
  redisCpuUsPerCycle: number
  rounds: number[]
}

/** One shape of B: how many workers, how many keys each cycles over, and whether it waits or tries once. */
export interface ThroughputShape {
  concurrency: number
  keysPerWorker: number
  /** 0: tryAcquire (one attempt); otherwise the acquire's wait. */
  wait: number
  /** Only these libraries (default: every single-node library and the reference row). */
  libs?: readonly LibKind[]
}

export const B_SHAPES = {
  /** 50 workers, one key each, acquire (waiting allowed). */
  one: { concurrency: 50, keysPerWorker: 1, wait: 5_000 },
  /** 50 workers, 100 keys each (5,000 in all), tryAcquire. */
  hundred: { concurrency: 50, keysPerWorker: 100, wait: 0 },
  /** 1,000 workers on 100,000 keys, tryAcquire: fencelock and the seed. */
  scale: { concurrency: 1_000, keysPerWorker: 100, wait: 0, libs: ['fencelock', 'seed'] },
} satisfies Record<string, ThroughputShape>

/** One run of `shape` for `lib` on `urls` (one node, or the nodes of a quorum) in worker `w`: its row, `rounds` left empty. */
export async function throughputRun(
  w: Worker,
  lib: LibSpec,
  urls: string[],
  shape: ThroughputShape,
  durationMs: number,
  prefix: string,
): Promise<ThroughputRow> {
  const r = await w.run<Omit<ThroughputRow, 'lib' | 'label' | 'rounds'>>({
    type: 'throughput',
    lib,
    urls,
    concurrency: shape.concurrency,
    keysPerWorker: shape.keysPerWorker,
    wait: shape.wait,
    durationMs,
    prefix,
  })
  return { lib: lib.kind, label: libLabel(lib), ...r, rounds: [] }
}

export async function uncontendedThroughput(pool: Pool, server: Server, cfg: Config, shape: ThroughputShape = B_SHAPES.one): Promise<ThroughputRow[]> {
  const [w] = await pool.take(1)
  const all = new Map<string, ThroughputRow[]>()
  const libs = chosen(cfg, THROUGHPUT).filter((lib) => !shape.libs || shape.libs.includes(lib.kind))
  const tag = `${shape.concurrency}x${shape.keysPerWorker}${shape.wait === 0 ? ' try' : ''}`
  for (let round = 0; round < cfg.latencyRounds; round++) {
    for (const lib of libs) {
      const row = await throughputRun(w!, lib, [server.url], shape, cfg.throughputMs, `b:${lib.kind}:${round}`)
      await server.admin.flushall()
      const list = all.get(row.label) ?? []
      list.push(row)
      all.set(row.label, list)
      log(`  B ${tag} ${row.label} round ${round + 1}: ${Math.round(row.cyclesPerSec)} cycles/s`)
    }
  }
  return [...all.values()].map(medianRound)
}

/**
 * The round with the median cycles/s, all rounds kept in `rounds`. Not the best round: on a shared
 * VM, load elsewhere can make loopback round trips faster (a busy CPU wakes up sooner), so the
 * best round measures the neighbours as much as the library.
 */
export function medianRound<T extends { cyclesPerSec: number; rounds: number[] }>(rows: T[]): T {
  const sorted = [...rows].sort((a, b) => a.cyclesPerSec - b.cyclesPerSec)
  const mid = sorted[Math.floor((sorted.length - 1) / 2)]!
  return { ...mid, rounds: rows.map((r) => r.cyclesPerSec) }
}
