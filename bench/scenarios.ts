// The scenarios of `npm run bench`. Each returns plain rows; bench/report.ts turns them into the
// table, the JSON, the markdown and the SVG.
import { Redis } from 'ioredis'
import { libLabel, openLib, openSemaphore, QuorumUnavailable, semaphoreLabel, type LibKind, type LibSpec } from './libs.js'
import { Pool, Worker } from './pool.js'
import { counters, delta, type Counters, type Server } from './redis.js'
import { clock, percentile, sleep } from './stats.js'
import type { Sections } from './worker.js'

export interface Config {
  quick: boolean
  latencyN: number
  latencyRounds: number
  throughputMs: number
  contendMs: number
  idleMs: number
  scaleMs: number
  memoryN: number
  quorumN: number
  quorumMs: number
  /** --lib filter (development): only these library kinds. */
  libs?: ReadonlySet<string>
}

const chosen = (cfg: Config, list: LibSpec[]): LibSpec[] => (cfg.libs ? list.filter((l) => cfg.libs?.has(l.kind)) : list)

export const FULL: Config = {
  quick: false,
  latencyN: 5_000,
  latencyRounds: 3,
  throughputMs: 1_500,
  contendMs: 10_000,
  idleMs: 5_000,
  scaleMs: 5_000,
  memoryN: 10_000,
  quorumN: 2_000,
  quorumMs: 5_000,
}

export const QUICK: Config = {
  quick: true,
  latencyN: 500,
  latencyRounds: 1,
  throughputMs: 400,
  contendMs: 1_500,
  idleMs: 1_000,
  scaleMs: 1_000,
  memoryN: 1_000,
  quorumN: 200,
  quorumMs: 1_000,
}

/** Single-node peers, at their defaults (uncontended scenarios: retry settings do not matter). */
export const SINGLE: LibSpec[] = [{ kind: 'fencelock' }, { kind: 'seed' }, { kind: 'redlock4' }, { kind: 'redlock5' }, { kind: 'sesame' }, { kind: 'semaphore' }]

/**
 * Scenario A: the single-node libraries, and fencelock again with a subscriber on every
 * `fencelock:*` diagnostics channel, in the same interleaved rounds (telemetry's cost).
 */
export const LATENCY: LibSpec[] = [SINGLE[0]!, { kind: 'fencelock', telemetry: true }, ...SINGLE.slice(1), { kind: 'fencelock-scripts' }]
/** B: the single-node libraries, and fencelock's scripts sent by hand as a reference row. */
export const THROUGHPUT: LibSpec[] = [...SINGLE, { kind: 'fencelock-scripts' }]

/** Contended and idle scenarios: every peer at its defaults and tuned to a 10 ms retry. */
export const CONTENDED: LibSpec[] = [
  { kind: 'fencelock' },
  { kind: 'seed' },
  { kind: 'seed', retry: 10 },
  { kind: 'redlock4' },
  { kind: 'redlock4', retry: 10 },
  { kind: 'redlock5' },
  { kind: 'redlock5', retry: 10 },
  { kind: 'sesame' },
  { kind: 'sesame', retry: 10 },
  // redis-semaphore already retries every 10 ms by default: its defaults are its tuned setting.
  { kind: 'semaphore' },
]

export const QUORUM: LibSpec[] = [
  { kind: 'fencelock' },
  { kind: 'redlock4', retry: 10 },
  { kind: 'redlock5', retry: 10 },
  { kind: 'sesame', retry: 10 },
  { kind: 'semaphore-redlock' },
]

/** Tuned to the fastest sensible retry: explicitly 10 ms, or a library whose default is 10 ms. */
export const isTuned = (spec: LibSpec): boolean => spec.retry !== undefined || spec.kind === 'semaphore' || spec.kind === 'semaphore-redlock'

const log = (line: string) => process.stderr.write(`${line}\n`)

// ------------------------------------------------------------------ floor

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

// ---------------------------------------------------------------- A and B

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
  /** All rounds' cycles/s, in order; the row shows the median round. */
  rounds: number[]
  /** All rounds' client CPU µs per cycle, in order (A). */
  cpuRounds?: number[]
  /** fencelock with a subscriber on every diagnostics channel (A). */
  telemetry?: boolean
}

export async function scenarioA(pool: Pool, server: Server, cfg: Config): Promise<LatencyRow[]> {
  const [w] = await pool.take(1)
  const all = new Map<string, LatencyRow[]>()
  // One unmeasured pass per library first: the first library of round 1 would otherwise run on a
  // colder JIT than the rest (in a quick run, one round, it made fencelock's CPU per cycle ~1.5x;
  // in one process fencelock's CPU per cycle still fell from 189 to 73 µs over its first ~10,000).
  for (const lib of chosen(cfg, LATENCY)) {
    await w!.run({ type: 'latency', lib, urls: [server.url], n: Math.min(3_000, cfg.latencyN), warmup: 0, prefix: `a:warm:${lib.kind}` })
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
  return [...all.values()].map((rounds) => ({ ...medianRound(rounds), cpuRounds: rounds.map((x) => x.clientCpuUsPerCycle) }))
}

export interface ThroughputRow {
  lib: LibKind
  label: string
  cyclesPerSec: number
  wirePerCycle: number
  rounds: number[]
}

export async function scenarioB(pool: Pool, server: Server, cfg: Config): Promise<ThroughputRow[]> {
  const [w] = await pool.take(1)
  const all = new Map<string, ThroughputRow[]>()
  for (let round = 0; round < cfg.latencyRounds; round++) {
    for (const lib of chosen(cfg, THROUGHPUT)) {
      const label = libLabel(lib)
      const r = await w!.run<{ cyclesPerSec: number; wirePerCycle: number }>({
        type: 'throughput',
        lib,
        urls: [server.url],
        concurrency: 50,
        durationMs: cfg.throughputMs,
        prefix: `b:${lib.kind}:${round}`,
      })
      await server.admin.flushall()
      const list = all.get(label) ?? []
      list.push({ lib: lib.kind, label, ...r, rounds: [] })
      all.set(label, list)
      log(`  B ${label} round ${round + 1}: ${Math.round(r.cyclesPerSec)} cycles/s`)
    }
  }
  return [...all.values()].map(medianRound)
}

/**
 * The round with the median cycles/s, all rounds kept in `rounds`. Not the best round: on a shared
 * VM, load elsewhere can make loopback round trips faster (a busy CPU wakes up sooner), so the
 * best round measures the neighbours as much as the library.
 */
function medianRound<T extends { cyclesPerSec: number; rounds: number[] }>(rows: T[]): T {
  const sorted = [...rows].sort((a, b) => a.cyclesPerSec - b.cyclesPerSec)
  const mid = sorted[Math.floor((sorted.length - 1) / 2)]!
  return { ...mid, rounds: rows.map((r) => r.cyclesPerSec) }
}

// ------------------------------------------------------- contended (C, E, quorum)

export interface ContendRow {
  lib: LibKind
  label: string
  tuned: boolean
  procs: number
  perProc: number
  seconds: number
  sections: number
  sectionsPerSec: number
  handoffsPerSec: number
  gapP50: number
  gapP99: number
  gapMax: number
  gapMean: number
  /** Mean time a section holds the lock (acquired -> release sent), ms. */
  holdMean: number
  waitP50: number
  waitP99: number
  /** Longest wait of any acquire of the run, failed ones included (a stall resolves after the window). */
  waitMax: number
  /** Commands sent by the lock library's connections (counted in each client), per acquisition. */
  wirePerAcq: number
  /** Wire commands per handoff (E). */
  wirePerHandoff: number
  /** INFO commandstats delta (includes redis.call()s inside scripts), minus the counter's GET+SET, per acquisition. */
  redisPerAcq: number
  /** Pub/sub messages received by all contending processes, per acquisition. */
  messagesPerAcq: number
  /** CPU of all contending processes together, per acquisition (µs). */
  clientCpuPerAcqUs: number
  /** CPU of the Redis server(s) (INFO cpu delta), per acquisition (µs). */
  redisCpuPerAcqUs: number
  byCommand: Record<string, number>
  /** Wire commands by name (BENCH_WIRE_DEBUG=1 only). */
  wireByName?: Record<string, number>
  fairness: number
  minSections: number
  maxSections: number
  counter: number
  lostUpdates: number
  overlaps: number
  fenceRegressions: number
  violations: number
  giveUps: number
  /** Acquires that failed for good (timed out or threw) and were retried by the benchmark loop. */
  failedAcquires: number
  errors: string[]
  unavailable?: string
}

export async function contend(
  pool: Pool,
  servers: Server[],
  lib: LibSpec,
  opts: { procs: number; perProc: number; ms: number; key: string },
): Promise<ContendRow> {
  const label = libLabel(lib)
  const workers = await pool.take(opts.procs)
  const urls = servers.map((s) => s.url)
  const base = { lib: lib.kind, label, tuned: isTuned(lib), procs: opts.procs, perProc: opts.perProc, seconds: opts.ms / 1000 }
  try {
    await Promise.all(workers.map((w) => w.run({ type: 'contend-open', lib, urls })))
  } catch (err) {
    if (/QuorumUnavailable/.test(String(err))) return { ...emptyRow(base), unavailable: String(err) }
    throw err
  }
  const warmAt = clock() + 100
  const warm = await Promise.all(
    workers.map((w) => w.run<{ errors: string[] }>({ type: 'contend-warm', key: opts.key, concurrency: opts.perProc, startAt: warmAt, ttl: 10_000 })),
  )
  const warmErrors = warm.flatMap((x) => x.errors)
  const counterKey = `${opts.key}:counter`
  const sumCounters = async () => {
    const all = await Promise.all(servers.map((s) => counters(s)))
    return all.reduce<Counters>((a, b) => ({ commands: a.commands + b.commands, cpuMs: a.cpuMs + b.cpuMs, byCommand: mergeCounts(a.byCommand, b.byCommand) }), {
      commands: 0,
      cpuMs: 0,
      byCommand: {},
    })
  }
  const before = await sumCounters()
  const startAt = clock() + 250
  const endAt = startAt + opts.ms
  const parts = await Promise.all(
    workers.map((w, i) => w.run<Sections>({ type: 'contend-run', key: opts.key, counterKey, concurrency: opts.perProc, startAt, endAt, ttl: 10_000, worker: i })),
  )
  const used = delta(await sumCounters(), before)
  const counter = Number((await servers[0]!.admin.get(counterKey)) ?? 0)
  for (const s of servers) await s.admin.flushall()
  const row = analyse(base, parts, used, counter, startAt, endAt)
  row.errors.unshift(...warmErrors)
  return row
}

function mergeCounts(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out = { ...a }
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v
  return out
}

type Base = Pick<ContendRow, 'lib' | 'label' | 'tuned' | 'procs' | 'perProc' | 'seconds'>

function emptyRow(base: Base): ContendRow {
  return {
    ...base,
    sections: 0,
    sectionsPerSec: Number.NaN,
    handoffsPerSec: Number.NaN,
    gapP50: Number.NaN,
    gapP99: Number.NaN,
    gapMax: Number.NaN,
    gapMean: Number.NaN,
    holdMean: Number.NaN,
    waitP50: Number.NaN,
    waitP99: Number.NaN,
    waitMax: Number.NaN,
    wirePerAcq: Number.NaN,
    wirePerHandoff: Number.NaN,
    redisPerAcq: Number.NaN,
    messagesPerAcq: Number.NaN,
    clientCpuPerAcqUs: Number.NaN,
    redisCpuPerAcqUs: Number.NaN,
    byCommand: {},
    fairness: Number.NaN,
    minSections: 0,
    maxSections: 0,
    counter: 0,
    lostUpdates: 0,
    overlaps: 0,
    fenceRegressions: 0,
    violations: 0,
    giveUps: 0,
    failedAcquires: 0,
    errors: [],
  }
}

/** One critical section as a worker reported it. */
interface S {
  who: number
  acquired: number
  releasing: number
  wait: number
  fence: number | null
}

/** The workers' reports of one run, added up: every section, and the counters. */
function gather(parts: Sections[]) {
  const all: S[] = []
  const wireByName: Record<string, number> = {}
  const errors: string[] = []
  let wire = 0
  let cpuMs = 0
  let messages = 0
  let giveUps = 0
  let failedAcquires = 0
  let longestFailedWait = 0
  let maxInside = 0
  for (const p of parts) {
    for (const [k, v] of Object.entries(p.wireByName)) wireByName[k] = (wireByName[k] ?? 0) + v
    wire += p.wire
    cpuMs += p.cpuMs
    messages += p.messages
    giveUps += p.giveUps
    failedAcquires += p.failedAcquires
    longestFailedWait = Math.max(longestFailedWait, p.longestFailedWait)
    maxInside = Math.max(maxInside, p.maxInside ?? 0)
    errors.push(...p.errors)
    for (let i = 0; i < p.acquired.length; i++) all.push({ who: p.who[i]!, acquired: p.acquired[i]!, releasing: p.releasing[i]!, wait: p.wait[i]!, fence: p.fence[i] ?? null })
  }
  return { all, wire, cpuMs, messages, giveUps, failedAcquires, longestFailedWait, maxInside, errors, wireByName }
}

function analyse(base: Base, parts: Sections[], used: Counters, counter: number, startAt: number, endAt: number): ContendRow {
  const { all, wire, cpuMs, messages, giveUps, failedAcquires, longestFailedWait, errors, wireByName } = gather(parts)
  all.sort((a, b) => a.acquired - b.acquired)
  const inWindow = (s: S) => s.acquired >= startAt && s.acquired < endAt
  const gaps: number[] = []
  const waits: number[] = []
  const holds: number[] = []
  const perWho = new Map<number, number>()
  for (const p of parts) for (const who of new Set(p.who)) perWho.set(who, 0)
  let handoffs = 0
  let handoffsTotal = 0
  let overlaps = 0
  let fenceRegressions = 0
  for (let i = 0; i < all.length; i++) {
    const s = all[i]!
    const prev = i > 0 ? all[i - 1] : undefined
    if (prev) {
      // Mutual exclusion: the next grant comes after the previous holder's release was sent.
      if (s.acquired < prev.releasing) overlaps++
      if (s.fence !== null && prev.fence !== null && s.fence <= prev.fence) fenceRegressions++
      if (prev.who !== s.who) {
        handoffsTotal++
        if (inWindow(s)) {
          handoffs++
          gaps.push(s.acquired - prev.releasing)
        }
      }
    }
    if (inWindow(s)) {
      waits.push(s.wait)
      holds.push(s.releasing - s.acquired)
      perWho.set(s.who, (perWho.get(s.who) ?? 0) + 1)
    }
  }
  const seconds = (endAt - startAt) / 1000
  const counts = [...perWho.values()]
  const maxSections = counts.length ? Math.max(...counts) : 0
  const minSections = counts.length ? Math.min(...counts) : 0
  const lostUpdates = all.length - counter
  return {
    ...base,
    sections: all.length,
    sectionsPerSec: waits.length / seconds,
    handoffsPerSec: handoffs / seconds,
    gapP50: percentile(gaps, 50),
    gapP99: percentile(gaps, 99),
    gapMax: percentile(gaps, 100),
    gapMean: gaps.reduce((a, b) => a + b, 0) / gaps.length,
    holdMean: holds.reduce((a, b) => a + b, 0) / holds.length,
    waitP50: percentile(waits, 50),
    waitP99: percentile(waits, 99),
    // Over every section, not only the window: a stalled acquire usually resolves after the window.
    waitMax: Math.max(longestFailedWait, ...all.map((x) => x.wait)),
    wirePerAcq: wire / all.length,
    wirePerHandoff: wire / Math.max(1, handoffsTotal),
    redisPerAcq: (used.commands - 2 * all.length) / all.length,
    messagesPerAcq: messages / all.length,
    clientCpuPerAcqUs: (cpuMs * 1000) / all.length,
    redisCpuPerAcqUs: (used.cpuMs * 1000) / all.length,
    byCommand: used.byCommand,
    ...(Object.keys(wireByName).length ? { wireByName } : {}),
    fairness: minSections > 0 ? maxSections / minSections : Number.POSITIVE_INFINITY,
    minSections,
    maxSections,
    counter,
    lostUpdates,
    overlaps,
    fenceRegressions,
    violations: Math.abs(lostUpdates) + overlaps + fenceRegressions,
    giveUps,
    failedAcquires,
    errors,
  }
}

export async function scenarioC(pool: Pool, server: Server, cfg: Config): Promise<ContendRow[]> {
  const rows: ContendRow[] = []
  for (const lib of chosen(cfg, CONTENDED)) {
    const row = await contend(pool, [server], lib, { procs: 8, perProc: 1, ms: cfg.contendMs, key: `c:${lib.kind}:${lib.retry ?? 'd'}` })
    log(`  C ${row.label}: ${Math.round(row.handoffsPerSec)} handoffs/s, gap p50 ${row.gapP50.toFixed(2)} ms, violations ${row.violations}`)
    rows.push(row)
  }
  return rows
}

/**
 * E's scale curve: [processes, waiters per process] for 2, 8, 32 and 128 waiters on one key. Past
 * 8 processes (4 per core on 2 cores) more processes measure the scheduler, not the lock: the
 * larger points add waiters inside the processes instead.
 */
export const E_CURVE: readonly (readonly [number, number])[] = [
  [2, 1],
  [8, 1],
  [8, 4],
  [8, 16],
]

export async function scenarioE(pool: Pool, server: Server, cfg: Config, peer: LibSpec): Promise<ContendRow[]> {
  const rows: ContendRow[] = []
  for (const lib of chosen(cfg, [{ kind: 'fencelock' }, peer])) {
    for (const [procs, perProc] of E_CURVE) {
      const row = await contend(pool, [server], lib, { procs, perProc, ms: cfg.scaleMs, key: `e:${lib.kind}:${procs}x${perProc}` })
      log(`  E ${row.label} ${procs}x${perProc}: ${Math.round(row.handoffsPerSec)} handoffs/s, gap p50 ${row.gapP50.toFixed(2)} ms, ${row.wirePerHandoff.toFixed(2)} wire/handoff`)
      rows.push(row)
    }
  }
  await pool.shrink(8)
  return rows
}

// -------------------------------------------------------------------- D

export interface IdleRow {
  lib: LibKind
  label: string
  tuned: boolean
  seconds: number
  waiters: number
  /** INFO commandstats delta while the 8 waiters wait (includes redis.call()s inside scripts). */
  redisCommands: number
  /** Commands the waiting process sent. */
  wireCommands: number
  waiterCpuMs: number
  redisCpuMs: number
  giveUps: number
}

export async function scenarioD(pool: Pool, server: Server, cfg: Config): Promise<IdleRow[]> {
  const [w] = await pool.take(1)
  const holderClient = new Redis(server.url)
  const rows: IdleRow[] = []
  try {
    for (const lib of chosen(cfg, CONTENDED)) {
      const key = `d:${lib.kind}:${lib.retry ?? 'd'}`
      const holderLib = openLib(lib, [holderClient])
      const holder = await holderLib.acquire(key, 60_000, 5_000)
      await sleep(50)
      const before = await counters(server)
      await w!.run({ type: 'idle-start', lib, urls: [server.url], key, waiters: 8, ttl: 10_000 })
      await sleep(cfg.idleMs)
      const snap = await w!.run<{ cpuMs: number; wire: number; giveUps: number }>({ type: 'idle-snapshot' })
      const used = delta(await counters(server), before)
      await holder.release()
      await w!.run({ type: 'idle-finish' })
      await holderLib.close()
      await server.admin.flushall()
      const row: IdleRow = {
        lib: lib.kind,
        label: libLabel(lib),
        tuned: isTuned(lib),
        seconds: cfg.idleMs / 1000,
        waiters: 8,
        redisCommands: used.commands,
        wireCommands: snap.wire,
        waiterCpuMs: snap.cpuMs,
        redisCpuMs: used.cpuMs,
        giveUps: snap.giveUps,
      }
      log(`  D ${row.label}: ${row.redisCommands} Redis commands, waiter CPU ${row.waiterCpuMs.toFixed(0)} ms, Redis CPU ${row.redisCpuMs.toFixed(0)} ms`)
      rows.push(row)
    }
  } finally {
    await holderClient.quit().catch(() => holderClient.disconnect())
  }
  return rows
}

// -------------------------------------------------------------------- F

export interface MemoryRow {
  lib: LibKind
  label: string
  n: number
  heldBytes: number
  waiterBytes: number
}

export async function scenarioF(server: Server, cfg: Config): Promise<MemoryRow[]> {
  const rows: MemoryRow[] = []
  for (const lib of chosen(cfg, SINGLE)) {
    const result: Partial<Record<'held' | 'waiter', number>> = {}
    for (const what of ['held', 'waiter'] as const) {
      // A fresh process each time: waiters of the polling libraries cannot be cancelled.
      const w = new Worker({ exposeGc: true })
      try {
        const r = await w.run<{ bytes: number }>({ type: 'memory', lib, urls: [server.url], n: cfg.memoryN, what, prefix: `f:${lib.kind}` })
        result[what] = r.bytes
      } finally {
        w.kill()
      }
      await sleep(100)
      await server.admin.flushall()
    }
    const row = { lib: lib.kind, label: libLabel(lib), n: cfg.memoryN, heldBytes: result.held ?? Number.NaN, waiterBytes: result.waiter ?? Number.NaN }
    log(`  F ${row.label}: ${Math.round(row.heldBytes)} B/held lease, ${Math.round(row.waiterBytes)} B/waiter`)
    rows.push(row)
  }
  return rows
}

// ---------------------------------------------------------------- quorum

export interface QuorumResult {
  fencelock: string
  latency: LatencyRow[]
  contended: ContendRow[]
  failures: { label: string; message: string }[]
}

export async function scenarioQuorum(pool: Pool, servers: Server[], cfg: Config): Promise<QuorumResult> {
  let fencelock = 'available'
  const latency: LatencyRow[] = []
  const failures: { label: string; message: string }[] = []
  for (const lib of chosen(cfg, QUORUM)) {
    try {
      const [w] = await pool.take(1)
      const r = await w!.run<Omit<LatencyRow, 'lib' | 'label' | 'rounds' | 'redisCpuUsPerCycle'>>({
        type: 'latency',
        lib,
        urls: servers.map((s) => s.url),
        n: cfg.quorumN,
        warmup: Math.min(200, cfg.quorumN / 5),
        prefix: `q:${lib.kind}`,
      })
      latency.push({ lib: lib.kind, label: libLabel(lib), ...r, redisCpuUsPerCycle: Number.NaN, rounds: [r.cyclesPerSec] })
      log(`  quorum latency ${libLabel(lib)}: ${Math.round(r.cyclesPerSec)} cycles/s`)
    } catch (err) {
      if (lib.kind === 'fencelock' && /QuorumUnavailable/.test(String(err))) {
        fencelock = 'not available in this build'
        log('  fencelock quorum: not available in this build')
        continue
      }
      // One library failing must not hide the others: record it and go on.
      failures.push({ label: libLabel(lib), message: String(err instanceof Error ? err.message : err) })
      if (lib.kind === 'fencelock') fencelock = `failed: ${String(err instanceof Error ? err.message : err)}`
      log(`  quorum latency ${libLabel(lib)} FAILED: ${String(err)}`)
      await pool.close()
    } finally {
      for (const s of servers) await s.admin.flushall()
    }
  }
  const contended: ContendRow[] = []
  for (const lib of chosen(cfg, QUORUM)) {
    if (lib.kind === 'fencelock' && fencelock !== 'available') continue
    try {
      const row = await contend(pool, servers, lib, { procs: 8, perProc: 1, ms: cfg.quorumMs, key: `q:${lib.kind}:contended` })
      log(`  quorum contended ${row.label}: ${Math.round(row.handoffsPerSec)} handoffs/s, violations ${row.violations}`)
      contended.push(row)
    } catch (err) {
      failures.push({ label: `${libLabel(lib)} (contended)`, message: String(err instanceof Error ? err.message : err) })
      log(`  quorum contended ${libLabel(lib)} FAILED: ${String(err)}`)
      await pool.close()
      for (const s of servers) await s.admin.flushall().catch(() => {})
    }
  }
  return { fencelock, latency, contended, failures }
}

// ------------------------------------------------------------------- S

/** Scenario S: fencelock's semaphore beside redis-semaphore's `Semaphore` at its defaults. */
export const SEMAPHORES: LibSpec[] = [{ kind: 'fencelock' }, { kind: 'semaphore' }]
export const S_LIMIT = 4
export const S_PROCS = 16

export interface SemaphoreRow {
  lib: LibKind
  label: string
  procs: number
  limit: number
  seconds: number
  permits: number
  permitsPerSec: number
  /** Permits that went to another process than the one that freed them, per second. */
  handoffsPerSec: number
  /** Release sent by one process -> that permit acquired by another (permits matched in the order they were freed), ms. */
  gapP50: number
  gapP99: number
  gapMax: number
  holdMean: number
  waitP50: number
  waitP99: number
  waitMax: number
  wirePerAcq: number
  /** INFO commandstats delta, minus the protected side's INCR+DECR, per acquisition. */
  redisPerAcq: number
  messagesPerAcq: number
  clientCpuPerAcqUs: number
  redisCpuPerAcqUs: number
  fairness: number
  minPermits: number
  maxPermits: number
  /** Most holders the protected side (INCR/DECR) counted at once. */
  maxInside: number
  /** Most sections (acquired -> release sent) that overlapped in time. */
  maxOverlap: number
  fenceRegressions: number
  violations: number
  giveUps: number
  failedAcquires: number
  errors: string[]
  idle: {
    seconds: number
    waiters: number
    /** INFO commandstats delta while the waiters wait (their first attempts included, as in D). */
    redisCommands: number
    /** The same from `parkedAfter` ms on, when every waiter has made its first attempts: the cost of waiting itself. */
    parkedCommands: number
    parkedSeconds: number
    wireCommands: number
    waiterCpuMs: number
    redisCpuMs: number
    giveUps: number
  }
}

export async function scenarioS(pool: Pool, server: Server, cfg: Config): Promise<SemaphoreRow[]> {
  const rows: SemaphoreRow[] = []
  for (const lib of chosen(cfg, SEMAPHORES)) {
    const contended = await semaphoreContend(pool, server, lib, { procs: S_PROCS, limit: S_LIMIT, ms: cfg.contendMs, name: `s:${lib.kind}` })
    const idle = await semaphoreIdle(pool, server, lib, { procs: S_PROCS, limit: S_LIMIT, ms: cfg.idleMs, name: `s:${lib.kind}:idle` })
    const row = { ...contended, idle }
    log(`  S ${row.label}: ${Math.round(row.permitsPerSec)} permits/s, ${Math.round(row.handoffsPerSec)} handed over/s, gap p50 ${row.gapP50.toFixed(2)} ms, fairness ${row.fairness.toFixed(2)}, idle ${idle.redisCommands} Redis commands, violations ${row.violations}`)
    rows.push(row)
  }
  await pool.shrink(8)
  return rows
}

async function semaphoreContend(pool: Pool, server: Server, lib: LibSpec, opts: { procs: number; limit: number; ms: number; name: string }): Promise<Omit<SemaphoreRow, 'idle'>> {
  const workers = await pool.take(opts.procs)
  const semaphore = { name: opts.name, limit: opts.limit }
  await Promise.all(workers.map((w) => w.run({ type: 'contend-open', lib, urls: [server.url], semaphore })))
  const warmAt = clock() + 100
  const warm = await Promise.all(workers.map((w) => w.run<{ errors: string[] }>({ type: 'contend-warm', key: opts.name, concurrency: 1, startAt: warmAt, ttl: 10_000 })))
  const insideKey = `${opts.name}:inside`
  const before = await counters(server)
  const startAt = clock() + 250
  const endAt = startAt + opts.ms
  const parts = await Promise.all(
    workers.map((w, i) => w.run<Sections>({ type: 'contend-run', key: opts.name, counterKey: insideKey, concurrency: 1, startAt, endAt, ttl: 10_000, worker: i, inside: true })),
  )
  const used = delta(await counters(server), before)
  await server.admin.flushall()
  const row = analyseSemaphore(lib, opts, parts, used, startAt, endAt)
  row.errors.unshift(...warm.flatMap((x) => x.errors))
  return row
}

function analyseSemaphore(lib: LibSpec, opts: { procs: number; limit: number }, parts: Sections[], used: Counters, startAt: number, endAt: number): Omit<SemaphoreRow, 'idle'> {
  const { all, wire, cpuMs, messages, giveUps, failedAcquires, longestFailedWait, maxInside, errors } = gather(parts)
  const inWindow = (s: S) => s.acquired >= startAt && s.acquired < endAt
  // Permits are alike: match each acquisition with the earliest permit freed (release sent) before
  // it and not taken yet. The first `limit` acquisitions take permits nobody freed.
  const byAcquired = [...all].sort((a, b) => a.acquired - b.acquired)
  const byReleasing = [...all].sort((a, b) => a.releasing - b.releasing)
  const freed: { at: number; who: number }[] = []
  let head = 0
  let r = 0
  let unfreed = opts.limit
  const gaps: number[] = []
  let handoffs = 0
  let overLimit = 0
  for (const s of byAcquired) {
    while (r < byReleasing.length && byReleasing[r]!.releasing < s.acquired) freed.push({ at: byReleasing[r]!.releasing, who: byReleasing[r++]!.who })
    if (unfreed > 0) {
      unfreed--
      continue
    }
    const slot = freed[head]
    if (!slot) {
      overLimit++ // more permits out than the limit (or the run's first sections): no release to match
      continue
    }
    head++
    if (slot.who !== s.who && inWindow(s)) {
      handoffs++
      gaps.push(s.acquired - slot.at)
    }
  }
  // Most sections overlapping in time (acquired -> release sent lies inside the real holding).
  const points = all.flatMap((s) => [{ t: s.acquired, d: 1 }, { t: s.releasing, d: -1 }]).sort((a, b) => a.t - b.t || a.d - b.d)
  let open = 0
  let maxOverlap = 0
  for (const p of points) maxOverlap = Math.max(maxOverlap, (open += p.d))
  // Fences: above every fence whose acquire had returned before this one was called.
  let fenceRegressions = 0
  const fenced = all.filter((s) => s.fence !== null)
  const byCalled = [...fenced].sort((a, b) => a.acquired - a.wait - (b.acquired - b.wait))
  const fencedByAcquired = [...fenced].sort((a, b) => a.acquired - b.acquired)
  let j = 0
  let maxFence = -Infinity
  for (const s of byCalled) {
    while (j < fencedByAcquired.length && fencedByAcquired[j]!.acquired < s.acquired - s.wait) maxFence = Math.max(maxFence, fencedByAcquired[j++]!.fence!)
    if (s.fence! <= maxFence) fenceRegressions++
  }
  const perWho = new Map<number, number>()
  for (const p of parts) for (const who of new Set(p.who)) perWho.set(who, 0)
  const waits: number[] = []
  const holds: number[] = []
  for (const s of all) {
    if (!inWindow(s)) continue
    waits.push(s.wait)
    holds.push(s.releasing - s.acquired)
    perWho.set(s.who, (perWho.get(s.who) ?? 0) + 1)
  }
  const seconds = (endAt - startAt) / 1000
  const counts = [...perWho.values()]
  const maxPermits = counts.length ? Math.max(...counts) : 0
  const minPermits = counts.length ? Math.min(...counts) : 0
  const n = Math.max(1, all.length)
  return {
    lib: lib.kind,
    label: semaphoreLabel(lib),
    procs: opts.procs,
    limit: opts.limit,
    seconds,
    permits: all.length,
    permitsPerSec: waits.length / seconds,
    handoffsPerSec: handoffs / seconds,
    gapP50: percentile(gaps, 50),
    gapP99: percentile(gaps, 99),
    gapMax: percentile(gaps, 100),
    holdMean: holds.reduce((a, b) => a + b, 0) / Math.max(1, holds.length),
    waitP50: percentile(waits, 50),
    waitP99: percentile(waits, 99),
    waitMax: Math.max(longestFailedWait, ...all.map((x) => x.wait)),
    wirePerAcq: wire / n,
    redisPerAcq: (used.commands - 2 * all.length) / n,
    messagesPerAcq: messages / n,
    clientCpuPerAcqUs: (cpuMs * 1000) / n,
    redisCpuPerAcqUs: (used.cpuMs * 1000) / n,
    fairness: minPermits > 0 ? maxPermits / minPermits : Number.POSITIVE_INFINITY,
    minPermits,
    maxPermits,
    maxInside,
    maxOverlap,
    fenceRegressions,
    violations: (maxInside > opts.limit ? 1 : 0) + (maxOverlap > opts.limit ? 1 : 0) + overLimit + fenceRegressions,
    giveUps,
    failedAcquires,
    errors,
  }
}

/** Another client holds every permit; one waiter in each of `procs` processes waits `ms`. */
async function semaphoreIdle(pool: Pool, server: Server, lib: LibSpec, opts: { procs: number; limit: number; ms: number; name: string }): Promise<SemaphoreRow['idle']> {
  const workers = await pool.take(opts.procs)
  const holderClient = new Redis(server.url)
  const holderLib = openSemaphore(lib, [holderClient], opts.name, opts.limit)
  try {
    const held = await Promise.all(Array.from({ length: opts.limit }, () => holderLib.acquire(opts.name, 60_000, 5_000)))
    await sleep(50)
    const before = await counters(server)
    const began = clock()
    await Promise.all(workers.map((w) => w.run({ type: 'idle-start', lib, urls: [server.url], key: opts.name, waiters: 1, ttl: 10_000, semaphore: { name: opts.name, limit: opts.limit } })))
    // By then every waiter has made its first attempt and joined the queue (or is polling).
    const parkedAfter = Math.min(500, opts.ms / 4)
    await sleep(began + parkedAfter - clock())
    const parked = await counters(server)
    const parkedAt = clock()
    await sleep(began + opts.ms - clock())
    const snaps = await Promise.all(workers.map((w) => w.run<{ cpuMs: number; wire: number; giveUps: number }>({ type: 'idle-snapshot' })))
    const after = await counters(server)
    const parkedSeconds = (clock() - parkedAt) / 1000
    const used = delta(after, before)
    await Promise.all(held.map((h) => h.release()))
    await Promise.all(workers.map((w) => w.run({ type: 'idle-finish' })))
    await server.admin.flushall()
    return {
      seconds: opts.ms / 1000,
      waiters: opts.procs,
      redisCommands: used.commands,
      parkedCommands: delta(after, parked).commands,
      parkedSeconds,
      wireCommands: snaps.reduce((a, x) => a + x.wire, 0),
      waiterCpuMs: snaps.reduce((a, x) => a + x.cpuMs, 0),
      redisCpuMs: used.cpuMs,
      giveUps: snaps.reduce((a, x) => a + x.giveUps, 0),
    }
  } finally {
    await holderLib.close()
    await holderClient.quit().catch(() => holderClient.disconnect())
  }
}
