// Scenarios T (transfers: 8 processes move money between 16 accounts, two locked at once) and R
// (read-heavy: 90% reads under a read/write lock, against the same work under a mutex). The
// coordinator's side: set up, start every process on one clock, check and summarise.
import type { Config } from './bench-config.js'
import type { Pool } from './pool.js'
import { counters, delta, type Server } from './redis.js'
import { clock, percentile, sleep } from './stats.js'
import { pairLabel, rwLabel, type PairSpec, type RwKind } from './transfer-libs.js'
import type { RwSections, TransferSections } from './transfer-tasks.js'

export const T_PROCS = 8
export const T_ACCOUNTS = 16
export const R_PROCS = 8
export const R_READ_SHARE = 0.9
/** How long a section of R holds the lock beyond its GET (a read that takes a moment). */
export const R_HOLD_MS = 1
/** Time every process has to connect and warm up before the measured window. */
const WARMUP_MS = 1_500
const INITIAL_BALANCE = 1_000

export const PAIRS: PairSpec[] = [{ kind: 'fencelock-multi' }, { kind: 'fencelock-sorted' }, { kind: 'redlock5' }, { kind: 'redlock5', retry: 10 }]
export const RW: RwKind[] = ['fencelock-rw', 'fencelock-mutex']

const log = (line: string) => process.stderr.write(`${line}\n`)
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)

export interface TransferRow {
  lib: string
  label: string
  procs: number
  accounts: number
  seconds: number
  /** Transfers begun (locks acquired) in the window, per second. */
  transfersPerSec: number
  transfers: number
  waitP50: number
  waitP99: number
  waitMax: number
  holdMean: number
  wirePerTransfer: number
  /** INFO commandstats delta minus the 2 GETs and 2 SETs of the work, per transfer. */
  redisPerTransfer: number
  messagesPerTransfer: number
  clientCpuPerTransferUs: number
  redisCpuPerTransferUs: number
  fairness: number
  minTransfers: number
  maxTransfers: number
  money: { initial: number; final: number }
  /** Sections of one account that overlapped (acquired before the previous holder's release was sent). */
  overlaps: number
  fenceRegressions: number
  violations: number
  giveUps: number
  failedAcquires: number
  errors: string[]
}

export interface RwRow {
  lib: RwKind
  label: string
  procs: number
  readShare: number
  holdMs: number
  seconds: number
  opsPerSec: number
  readsPerSec: number
  writesPerSec: number
  readWaitP50: number
  readWaitP99: number
  writeWaitP50: number
  writeWaitP99: number
  /** Longest wait of a write (writer starvation shows here). */
  writeWaitMax: number
  /** Most read sections in progress at once. */
  maxReaders: number
  wirePerOp: number
  redisPerOp: number
  messagesPerOp: number
  clientCpuPerOpUs: number
  redisCpuPerOpUs: number
  /** Writes whose increment is missing from the value. */
  lostWrites: number
  /** Write sections that overlapped any other section. */
  writerOverlaps: number
  fenceRegressions: number
  violations: number
  failedAcquires: number
  errors: string[]
}

/** Runs every process's task from now to `endAt`, and reads the server's counters over [startAt, end]. */
async function window<T>(pool: Pool, server: Server, procs: number, task: (startAt: number, endAt: number) => object, ms: number) {
  const workers = await pool.take(procs)
  // A process forked just now takes a while to load: start the clock once every one answers.
  await Promise.all(workers.map((w) => w.run({ type: 'ready' })))
  const startAt = clock() + WARMUP_MS
  const endAt = startAt + ms
  const parts = Promise.all(workers.map((w) => w.run<T>(task(startAt, endAt) as never)))
  await sleep(startAt - clock())
  const before = await counters(server)
  const done = await parts
  const used = delta(await counters(server), before)
  return { parts: done, used, startAt, endAt }
}

export async function transfersUnderTwoLocks(pool: Pool, server: Server, cfg: Config): Promise<TransferRow[]> {
  const rows: TransferRow[] = []
  for (const lib of PAIRS) {
    if (cfg.libs && !cfg.libs.has(lib.kind.startsWith('fencelock') ? 'fencelock' : lib.kind)) continue
    const accounts = Array.from({ length: T_ACCOUNTS }, (_, i) => `t:${lib.kind}:${lib.retry ?? 'd'}:account:${i}`)
    for (const key of accounts) await server.admin.set(`${key}:balance`, INITIAL_BALANCE)
    const { parts, used, startAt, endAt } = await window<TransferSections>(
      pool,
      server,
      T_PROCS,
      (startAt, endAt) => ({ type: 'transfer-run', lib, url: server.url, accounts, startAt, endAt, ttl: 10_000 }),
      cfg.contendMs,
    )
    const final = (await server.admin.mget(...accounts.map((key) => `${key}:balance`))).reduce((sum, v) => sum + Number(v), 0)
    await server.admin.flushall()
    const row = analyseT(lib, parts, used, startAt, endAt, { initial: INITIAL_BALANCE * T_ACCOUNTS, final })
    log(
      `  T ${row.label}: ${Math.round(row.transfersPerSec)} transfers/s, wait p50 ${row.waitP50.toFixed(2)} ms, p99 ${row.waitP99.toFixed(1)} ms, fairness ${row.fairness.toFixed(2)}, violations ${row.violations}`,
    )
    rows.push(row)
  }
  return rows
}

function analyseT(
  lib: PairSpec,
  parts: TransferSections[],
  used: ReturnType<typeof delta>,
  startAt: number,
  endAt: number,
  money: TransferRow['money'],
): TransferRow {
  interface S {
    proc: number
    a: number
    b: number
    acquired: number
    releasing: number
    wait: number
    fences: [number | null, number | null]
  }
  const all: S[] = parts.flatMap((p, proc) =>
    p.acquired.map((acquired, i) => ({
      proc,
      a: p.a[i]!,
      b: p.b[i]!,
      acquired,
      releasing: p.releasing[i]!,
      wait: p.wait[i]!,
      fences: [p.fenceA[i] ?? null, p.fenceB[i] ?? null] as [number | null, number | null],
    })),
  )
  const inWindow = all.filter((s) => s.acquired >= startAt && s.acquired < endAt)
  // Per account, in the order its locks were granted: no overlap, fences growing.
  let overlaps = 0
  let fenceRegressions = 0
  for (let account = 0; account < T_ACCOUNTS; account++) {
    const uses = all
      .filter((s) => s.a === account || s.b === account)
      .map((s) => ({ acquired: s.acquired, releasing: s.releasing, fence: s.a === account ? s.fences[0] : s.fences[1] }))
      .sort((x, y) => x.acquired - y.acquired)
    let lastRelease = -Infinity
    let lastFence = -Infinity
    for (const u of uses) {
      if (u.acquired < lastRelease) overlaps++
      lastRelease = Math.max(lastRelease, u.releasing)
      if (u.fence !== null) {
        if (u.fence <= lastFence) fenceRegressions++
        lastFence = Math.max(lastFence, u.fence)
      }
    }
  }
  const perProc = parts.map((_, proc) => inWindow.filter((s) => s.proc === proc).length)
  const n = Math.max(1, inWindow.length)
  const waits = inWindow.map((s) => s.wait)
  const seconds = (endAt - startAt) / 1000
  const moneyBad = money.final !== money.initial ? 1 : 0
  return {
    lib: lib.kind,
    label: pairLabel(lib),
    procs: parts.length,
    accounts: T_ACCOUNTS,
    seconds,
    transfersPerSec: inWindow.length / seconds,
    transfers: inWindow.length,
    waitP50: percentile(waits, 50),
    waitP99: percentile(waits, 99),
    waitMax: Math.max(0, ...parts.map((p) => p.longestFailedWait), ...all.map((s) => s.wait)),
    holdMean: mean(inWindow.map((s) => s.releasing - s.acquired)),
    wirePerTransfer: parts.reduce((a, p) => a + p.wire, 0) / n,
    redisPerTransfer: (used.commands - 4 * inWindow.length) / n,
    messagesPerTransfer: parts.reduce((a, p) => a + p.messages, 0) / n,
    clientCpuPerTransferUs: (parts.reduce((a, p) => a + p.cpuMs, 0) * 1000) / n,
    redisCpuPerTransferUs: (used.cpuMs * 1000) / n,
    fairness: Math.min(...perProc) > 0 ? Math.max(...perProc) / Math.min(...perProc) : Number.POSITIVE_INFINITY,
    minTransfers: Math.min(...perProc),
    maxTransfers: Math.max(...perProc),
    money,
    overlaps,
    fenceRegressions,
    violations: moneyBad + overlaps + fenceRegressions,
    giveUps: parts.reduce((a, p) => a + p.giveUps, 0),
    failedAcquires: parts.reduce((a, p) => a + p.failedAcquires, 0),
    errors: parts.flatMap((p) => p.errors).slice(0, 5),
  }
}

export async function readHeavyReadWriteLock(pool: Pool, server: Server, cfg: Config): Promise<RwRow[]> {
  const rows: RwRow[] = []
  for (const lib of RW) {
    if (cfg.libs && !cfg.libs.has('fencelock')) continue
    const name = `r:${lib}`
    const { parts, used, startAt, endAt } = await window<RwSections>(
      pool,
      server,
      R_PROCS,
      (startAt, endAt) => ({ type: 'rw-run', lib, url: server.url, name, readShare: R_READ_SHARE, holdMs: R_HOLD_MS, startAt, endAt, ttl: 10_000 }),
      cfg.contendMs,
    )
    const value = Number((await server.admin.get(`${name}:value`)) ?? 0)
    await server.admin.flushall()
    const row = analyseR(lib, parts, used, startAt, endAt, value)
    log(
      `  R ${row.label}: ${Math.round(row.opsPerSec)} ops/s (${Math.round(row.readsPerSec)} reads, ${Math.round(row.writesPerSec)} writes), up to ${row.maxReaders} readers at once, write wait p99 ${row.writeWaitP99.toFixed(1)} ms, violations ${row.violations}`,
    )
    rows.push(row)
  }
  return rows
}

function analyseR(lib: RwKind, parts: RwSections[], used: ReturnType<typeof delta>, startAt: number, endAt: number, value: number): RwRow {
  interface S {
    write: boolean
    acquired: number
    releasing: number
    wait: number
    fence: number
  }
  const all: S[] = parts.flatMap((p) =>
    p.acquired.map((acquired, i) => ({ write: p.write[i]!, acquired, releasing: p.releasing[i]!, wait: p.wait[i]!, fence: p.fence[i]! })),
  )
  all.sort((a, b) => a.acquired - b.acquired)
  // A write overlaps nothing: every section granted before it was over when it began, the next one
  // began after it ended. Fences: a write's above every earlier fence, a read's above every earlier write's.
  let writerOverlaps = 0
  let fenceRegressions = 0
  let lastRelease = -Infinity
  let maxFence = -Infinity
  let maxWriteFence = -Infinity
  all.forEach((s, i) => {
    if (s.write) {
      const next = all[i + 1]
      if (s.acquired < lastRelease || (next && next.acquired < s.releasing)) writerOverlaps++
      if (s.fence <= maxFence) fenceRegressions++
      maxWriteFence = Math.max(maxWriteFence, s.fence)
    } else if (s.fence <= maxWriteFence) fenceRegressions++
    maxFence = Math.max(maxFence, s.fence)
    lastRelease = Math.max(lastRelease, s.releasing)
  })
  const points = all
    .filter((s) => !s.write)
    .flatMap((s) => [
      { t: s.acquired, d: 1 },
      { t: s.releasing, d: -1 },
    ])
    .sort((a, b) => a.t - b.t || a.d - b.d)
  let open = 0
  let maxReaders = 0
  for (const p of points) maxReaders = Math.max(maxReaders, (open += p.d))
  const writes = all.filter((s) => s.write).length
  const lostWrites = writes - value
  const inWindow = all.filter((s) => s.acquired >= startAt && s.acquired < endAt)
  const reads = inWindow.filter((s) => !s.write)
  const writesIn = inWindow.filter((s) => s.write)
  const n = Math.max(1, inWindow.length)
  const seconds = (endAt - startAt) / 1000
  return {
    lib,
    label: rwLabel(lib),
    procs: parts.length,
    readShare: R_READ_SHARE,
    holdMs: R_HOLD_MS,
    seconds,
    opsPerSec: inWindow.length / seconds,
    readsPerSec: reads.length / seconds,
    writesPerSec: writesIn.length / seconds,
    readWaitP50: percentile(
      reads.map((s) => s.wait),
      50,
    ),
    readWaitP99: percentile(
      reads.map((s) => s.wait),
      99,
    ),
    writeWaitP50: percentile(
      writesIn.map((s) => s.wait),
      50,
    ),
    writeWaitP99: percentile(
      writesIn.map((s) => s.wait),
      99,
    ),
    writeWaitMax: Math.max(0, ...all.filter((s) => s.write).map((s) => s.wait)),
    maxReaders,
    wirePerOp: parts.reduce((a, p) => a + p.wire, 0) / n,
    // The work's own commands: a GET per section, a SET per write.
    redisPerOp: (used.commands - inWindow.length - writesIn.length) / n,
    messagesPerOp: parts.reduce((a, p) => a + p.messages, 0) / n,
    clientCpuPerOpUs: (parts.reduce((a, p) => a + p.cpuMs, 0) * 1000) / n,
    redisCpuPerOpUs: (used.cpuMs * 1000) / n,
    lostWrites,
    writerOverlaps,
    fenceRegressions,
    violations: Math.abs(lostWrites) + writerOverlaps + fenceRegressions,
    failedAcquires: parts.reduce((a, p) => a + p.failedAcquires, 0),
    errors: parts.flatMap((p) => p.errors).slice(0, 5),
  }
}
