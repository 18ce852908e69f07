// The cost scenarios of issue 12 ("cheaper per lock"), the coordinator's side:
// H  the handoff floor: a pub/sub wake-up plus one round trip between two processes;
// K  uncontended cost per operation over 10, 1,000 and 100,000 distinct resources;
// L  renewals at scale: one process holding 50,000 auto-extended leases;
// M  Redis memory per resource locked once (100,000 resources; 1,000,000 with --memory-1m).
import { libLabel, type LibKind, type LibSpec } from './libs.js'
import { type Pool, Worker } from './pool.js'
import { RENEW_LABELS, renewPeriod, type RenewKind } from './renew-tasks.js'
import { type Counters, counters, delta, type Server } from './redis.js'
import { SINGLE, type Config } from './bench-config.js'
import { percentile, sleep } from './stats.js'

const log = (line: string) => process.stderr.write(`${line}\n`)
const chosen = <T extends { kind: string }>(cfg: Config, list: T[]): T[] => (cfg.libs ? list.filter((l) => cfg.libs?.has(l.kind)) : list)

// ------------------------------------------------------------------ H

export interface HandoffFloor {
  /** Samples kept (after the warm-up). */
  n: number
  /** PUBLISH sent by P -> Q's GET answered, after Q was woken by that message, ms. */
  p50: number
  p99: number
  max: number
  /** Messages whose acknowledgement did not come within 1 s (should be 0). */
  missed: number
  errors: string[]
}

/**
 * The least a handoff between two processes can cost on this machine: P publishes on a channel
 * (its clock in the message), Q, subscribed, is woken and sends one GET on its other connection;
 * the sample is PUBLISH sent -> GET answered, on the clock shared by the machine's processes. One
 * message in flight at a time (Q acknowledges each).
 */
export async function handoffFloor(pool: Pool, server: Server, cfg: Config): Promise<HandoffFloor> {
  const [q, p] = await pool.take(2)
  const n = cfg.quick ? 600 : 4_000
  const warmup = cfg.quick ? 100 : 300
  const task = { url: server.url, channel: 'floor:wake', ackKey: 'floor:ack' }
  await server.admin.set('floor:value', 'x')
  await q!.run({ type: 'floor-listen', ...task })
  const { missed } = await p!.run<{ missed: number }>({ type: 'floor-publish', ...task, n })
  const r = await q!.run<Omit<HandoffFloor, 'missed'>>({ type: 'floor-collect', warmup })
  await server.admin.flushall()
  log(`  H handoff floor: p50 ${r.p50.toFixed(3)} ms, p99 ${r.p99.toFixed(3)} ms over ${r.n} samples`)
  return { ...r, missed }
}

/**
 * The handoff floor with `procs` processes alive, each hop waking the next (bench/cost-tasks.ts,
 * ringJoin); `missed` is 1 if the ring stopped (a message lost): its samples are the hops before.
 */
export interface RingFloor extends HandoffFloor {
  procs: number
}

/** The processes alive at which the floor is measured: C's 8 and the 2 of E's smallest point. */
export const RING_SIZES = [2, 8] as const

/**
 * The handoff floor with `procs` processes alive, as in C (8) and E's smallest point (2): a ring
 * of processes passes one message along, each hop a PUBLISH that wakes the next process, which
 * sends one GET; the sample is PUBLISH sent -> GET answered (H's measure, now with every process
 * of the contended run alive and taking turns).
 */
export async function handoffRing(pool: Pool, server: Server, cfg: Config, procs: number): Promise<RingFloor> {
  const workers = await pool.take(procs)
  const hops = cfg.quick ? 800 : 4_000
  const warmup = Math.ceil((cfg.quick ? 100 : 300) / procs)
  const base = { url: server.url, prefix: `ring${procs}`, doneKey: `ring${procs}:done` }
  await server.admin.set('floor:value', 'x')
  await Promise.all(workers.map((w, index) => w.run({ type: 'ring-join', ...base, index, procs, hops })))
  const { missed } = await workers[0]!.run<{ missed: number }>({ type: 'ring-start', ...base, timeoutS: 60 })
  const parts = await Promise.all(workers.map((w) => w.run<{ samples: number[]; errors: string[] }>({ type: 'ring-collect', warmup })))
  await server.admin.flushall()
  const samples = parts.flatMap((p) => p.samples)
  const row = {
    procs,
    n: samples.length,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    max: percentile(samples, 100),
    missed,
    errors: parts.flatMap((p) => p.errors),
  }
  log(`  H handoff floor, ${procs} processes alive: p50 ${row.p50.toFixed(3)} ms, p99 ${row.p99.toFixed(3)} ms over ${row.n} samples`)
  return row
}

// ------------------------------------------------------------------ K

export const K_SIZES = [10, 1_000, 100_000] as const

export interface KeyspaceRow {
  lib: LibKind
  label: string
  resources: number
  /** Keys Redis held when the measured cycles began (fencelock: one fence key per resource locked). */
  keys: number
  /** Time to lock every resource once before measuring (fencelock only), s. */
  fillSeconds: number
  cyclesPerSec: number
  /** Wall time per acquire+release, µs. */
  usPerCycle: number
  acquireP50: number
  acquireP99: number
  releaseP50: number
  releaseP99: number
  clientCpuUsPerCycle: number
  redisCpuUsPerCycle: number
  wirePerCycle: number
}

/**
 * Sequential acquire+release (as A), cycling over `resources` names; for fencelock every name is
 * locked once first, so Redis holds that many fence keys while it runs. The peers keep nothing per
 * resource after a release (their `keys` column shows it), so they only warm up.
 */
export async function costOverResources(pool: Pool, server: Server, cfg: Config): Promise<KeyspaceRow[]> {
  const [w] = await pool.take(1)
  const rows: KeyspaceRow[] = []
  const n = cfg.latencyN
  // Every library runs once, unmeasured, before the first size: otherwise the first rows measure a
  // cold JIT (seen in quick runs: the 10-resource rows up to 4x slower than later ones).
  for (const lib of chosen(cfg, SINGLE)) {
    await w!.run({ type: 'keyspace-open', lib, urls: [server.url], names: 1_000, prefix: `k:warm:${lib.kind}`, fill: false, concurrency: 1, warmup: 1_000 })
    await w!.run({ type: 'keyspace-run', n: 1_000 })
  }
  await server.admin.flushall()
  for (const resources of K_SIZES) {
    for (const lib of chosen(cfg, SINGLE)) {
      const prefix = `k:${lib.kind}:${resources}`
      const fill = lib.kind === 'fencelock'
      const opened = await w!.run<{ fillSeconds: number }>({
        type: 'keyspace-open',
        lib,
        urls: [server.url],
        names: resources,
        prefix,
        fill,
        concurrency: 500,
        warmup: Math.min(500, n / 5),
      })
      const keys = await server.admin.dbsize()
      const before = await counters(server)
      const r = await w!.run<Omit<KeyspaceRow, 'lib' | 'label' | 'resources' | 'keys' | 'fillSeconds' | 'redisCpuUsPerCycle'>>({ type: 'keyspace-run', n })
      const used = delta(await counters(server), before)
      await server.admin.flushall()
      const row = {
        lib: lib.kind,
        label: libLabel(lib),
        resources,
        keys,
        fillSeconds: fill ? opened.fillSeconds : 0,
        ...r,
        redisCpuUsPerCycle: (used.cpuMs * 1000) / n,
      }
      log(
        `  K ${row.label} over ${resources} resources (${keys} keys): ${Math.round(row.cyclesPerSec)} cycles/s, ${row.clientCpuUsPerCycle.toFixed(1)} µs client CPU/cycle`,
      )
      rows.push(row)
    }
  }
  return rows
}

// ------------------------------------------------------------------ L

export const RENEWERS: { kind: RenewKind }[] = [{ kind: 'fencelock' }, { kind: 'redlock5' }, { kind: 'semaphore' }]

export interface RenewRow {
  lib: RenewKind
  label: string
  leases: number
  ttl: number
  /** The library's nominal renewal period, ms. */
  periodMs: number
  acquired: number
  acquireSeconds: number
  holdSeconds: number
  /** Hold time / period. */
  periods: number
  /** INFO commandstats delta over the hold (incl. redis.call()s inside scripts). */
  redisCommands: number
  redisPerPeriod: number
  redisPer100PerPeriod: number
  /** Commands the holding process sent over the hold. */
  wireCommands: number
  wirePerPeriod: number
  wirePer100PerPeriod: number
  /** Script calls (EVALSHA + EVAL in commandstats) per period. */
  scriptsPerPeriod: number
  redisCpuMsPerPeriod: number
  clientCpuMsPerPeriod: number
  loopDelayP50: number
  loopDelayP99: number
  loopDelayMax: number
  heapPerLease: number
  /** Leases the library still called held at the end of the hold. */
  held: number
  lost: number
  released: number
  errors: string[]
}

/** One process holds `n` auto-extended leases for a few renewal periods; per library, a fresh --expose-gc worker. */
export async function renewalsAtScale(server: Server, cfg: Config): Promise<RenewRow[]> {
  const plan: RenewPlan = { leases: cfg.quick ? 5_000 : 50_000, ttl: cfg.quick ? 3_000 : 6_000, holdMs: cfg.quick ? 4_000 : 20_000 }
  const rows: RenewRow[] = []
  for (const { kind } of chosen(cfg, RENEWERS)) {
    const w = new Worker({ exposeGc: true })
    try {
      const row = await renewIn(w, server, kind, plan)
      log(
        `  L ${row.label}: ${row.acquired} leases in ${row.acquireSeconds.toFixed(1)} s; per 100 leases per period ${row.wirePer100PerPeriod.toFixed(2)} wire / ${row.redisPer100PerPeriod.toFixed(2)} Redis commands; loop delay p99 ${row.loopDelayP99.toFixed(1)} ms; ${Math.round(row.heapPerLease)} B/lease; held ${row.held}/${row.acquired}`,
      )
      rows.push(row)
    } finally {
      await w.stop()
      await server.admin.flushall()
    }
  }
  return rows
}

interface RenewPlan {
  leases: number
  ttl: number
  holdMs: number
}

/** What the worker reports after holding its leases for `holdMs`. */
interface RenewHold {
  seconds: number
  wire: number
  cpuMs: number
  loopDelayP50: number
  loopDelayP99: number
  loopDelayMax: number
  heapPerLease: number
  held: number
  lost: number
}

/** One library's run in its worker: acquire the leases, hold them (Redis counted around the hold only), release them. */
async function renewIn(w: Worker, server: Server, kind: RenewKind, plan: RenewPlan): Promise<RenewRow> {
  const { leases, ttl, holdMs } = plan
  const start = await w.run<{ acquired: number; acquireSeconds: number; errors: string[] }>({
    type: 'renew-start',
    lib: kind,
    url: server.url,
    n: leases,
    ttl,
    concurrency: 500,
    prefix: `l:${kind}`,
  })
  const before = await counters(server)
  const hold = await w.run<RenewHold>({ type: 'renew-hold', ms: holdMs })
  const used = delta(await counters(server), before)
  const finish = await w.run<{ released: number; errors: string[] }>({ type: 'renew-finish' })
  return renewRow(kind, plan, start, hold, used, finish)
}

function renewRow(
  kind: RenewKind,
  plan: RenewPlan,
  start: { acquired: number; acquireSeconds: number; errors: string[] },
  hold: RenewHold,
  used: Counters,
  finish: { released: number; errors: string[] },
): RenewRow {
  const periodMs = renewPeriod(kind, plan.ttl)
  const periods = (hold.seconds * 1000) / periodMs
  const per100 = (x: number) => x / periods / (start.acquired / 100)
  const scripts = (used.byCommand.evalsha ?? 0) + (used.byCommand.eval ?? 0)
  return {
    lib: kind,
    label: RENEW_LABELS[kind],
    leases: plan.leases,
    ttl: plan.ttl,
    periodMs,
    acquired: start.acquired,
    acquireSeconds: start.acquireSeconds,
    holdSeconds: hold.seconds,
    periods,
    redisCommands: used.commands,
    redisPerPeriod: used.commands / periods,
    redisPer100PerPeriod: per100(used.commands),
    wireCommands: hold.wire,
    wirePerPeriod: hold.wire / periods,
    wirePer100PerPeriod: per100(hold.wire),
    scriptsPerPeriod: scripts / periods,
    redisCpuMsPerPeriod: used.cpuMs / periods,
    clientCpuMsPerPeriod: hold.cpuMs / periods,
    loopDelayP50: hold.loopDelayP50,
    loopDelayP99: hold.loopDelayP99,
    loopDelayMax: hold.loopDelayMax,
    heapPerLease: hold.heapPerLease,
    held: hold.held,
    lost: hold.lost,
    released: finish.released,
    errors: [...start.errors, ...finish.errors],
  }
}

// ------------------------------------------------------------------ M

export interface MemoryRedisRow {
  lib: LibKind
  label: string
  resources: number
  seconds: number
  perSec: number
  /** used_memory after - before, bytes. */
  usedBytes: number
  bytesPerResource: number
  /** Keys left in Redis (DBSIZE) after every resource was locked and released once. */
  keys: number
  /** A key left, its PTTL (ms, -1 none) and MEMORY USAGE (bytes). */
  sample?: { key: string; pttl: number; bytes: number }
  /** Measured with every resource still held (acquired, not released), not locked once. */
  held?: boolean
}

async function usedMemory(server: Server): Promise<number> {
  const text = (await server.admin.info('memory')) as string
  return Number(/^used_memory:(\d+)/m.exec(text)?.[1] ?? Number.NaN)
}

/**
 * Locks `resources` distinct names once each (acquire + release), `concurrency` at a time on one
 * connection in each of `procs` processes, and reads Redis' used_memory before and after.
 */
export async function redisMemory(
  pool: Pool,
  server: Server,
  lib: LibSpec,
  resources: number,
  opts: { procs: number; concurrency: number; hold?: boolean },
): Promise<MemoryRedisRow> {
  const workers = await pool.take(opts.procs)
  await server.admin.flushall()
  await sleep(200)
  const before = await usedMemory(server)
  const share = Math.ceil(resources / opts.procs)
  // Short names, like an application's (`res:123456`): the key names are part of what Redis stores.
  const prefix = 'res'
  const began = performance.now()
  await Promise.all(
    workers.map((w, i) =>
      w.run({
        type: 'touch',
        lib,
        urls: [server.url],
        from: i * share,
        to: Math.min(resources, (i + 1) * share),
        concurrency: opts.concurrency,
        prefix,
        ...(opts.hold && { hold: true }),
      }),
    ),
  )
  const seconds = (performance.now() - began) / 1000
  await sleep(200) // the clients have closed: their buffers are gone from used_memory
  const after = await usedMemory(server)
  const keys = await server.admin.dbsize()
  let sample: MemoryRedisRow['sample']
  // Held: the sample is a lock key (the lease's value and its expiry), not a fence key.
  const key = keys === 0 ? null : opts.hold ? `fencelock:{${prefix}:0}:L` : await server.admin.randomkey()
  if (key) sample = { key, pttl: await server.admin.pttl(key), bytes: Number(await server.admin.call('MEMORY', 'USAGE', key)) }
  await server.admin.flushall()
  return {
    lib: lib.kind,
    label: opts.hold ? `${libLabel(lib)}, held` : libLabel(lib),
    resources,
    seconds,
    perSec: resources / seconds,
    usedBytes: after - before,
    bytesPerResource: (after - before) / resources,
    keys,
    ...(sample ? { sample } : {}),
    ...(opts.hold && { held: true }),
  }
}

/** Acquire+release cycles in flight on M's connection (more saturates nothing but the event loop). */
export const M_CONCURRENCY = 1_000

/** Scenario M: every single-node library over 100,000 resources (10,000 in --quick). */
export async function redisMemoryPerResource(pool: Pool, server: Server, cfg: Config): Promise<MemoryRedisRow[]> {
  const resources = cfg.quick ? 10_000 : 100_000
  const rows: MemoryRedisRow[] = []
  for (const lib of chosen(cfg, SINGLE)) {
    const row = await redisMemory(pool, server, lib, resources, { procs: 1, concurrency: M_CONCURRENCY })
    log(`  M ${row.label}: ${fmtBytes(row.bytesPerResource)} per resource, ${row.keys} keys left, ${row.seconds.toFixed(1)} s`)
    rows.push(row)
  }
  // fencelock's resources while held: each lock key's value records its holder and times.
  const own = chosen(cfg, SINGLE).find((lib) => lib.kind === 'fencelock')
  if (own) {
    const row = await redisMemory(pool, server, own, resources, { procs: 1, concurrency: M_CONCURRENCY, hold: true })
    log(`  M ${row.label}: ${fmtBytes(row.bytesPerResource)} per resource, ${row.keys} keys, ${row.seconds.toFixed(1)} s`)
    rows.push(row)
  }
  return rows
}

const fmtBytes = (b: number) => `${Math.round(b)} B`
