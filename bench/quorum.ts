// Quorum mode on 3 Redis nodes: uncontended latency, then 8 processes contending on one key.
import { BEFORE, chosen, type Config } from './bench-config.js'
import type { ContendRow } from './contend-analysis.js'
import { contend } from './contention.js'
import { B_SHAPES, medianRound, throughputRun, type LatencyRow, type ThroughputRow } from './latency.js'
import { libLabel, type LibSpec } from './libs.js'
import type { Pool } from './pool.js'
import type { Server } from './redis.js'

export const QUORUM: LibSpec[] = [
  { kind: 'fencelock' },
  ...BEFORE,
  { kind: 'redlock4', retry: 10 },
  { kind: 'redlock5', retry: 10 },
  { kind: 'sesame', retry: 10 },
  { kind: 'semaphore-redlock' },
]

const log = (line: string) => process.stderr.write(`${line}\n`)

export interface QuorumResult {
  fencelock: string
  latency: LatencyRow[]
  contended: ContendRow[]
  /** 50 concurrent workers in one process, one key each (issue 20's quorum target). */
  throughput50?: ThroughputRow[]
  failures: { label: string; message: string }[]
}

/**
 * 50 workers on one client per node, one key each, acquire+release: one row per library that ran,
 * the median of `latencyRounds` rounds that take the libraries in turn (as B does), so that a
 * machine that changes speed within the minute moves every library alike.
 */
async function quorumThroughput(pool: Pool, servers: Server[], cfg: Config, failures: QuorumResult['failures'], skip: (lib: LibSpec) => boolean) {
  const all = new Map<string, ThroughputRow[]>()
  const failed = new Set<LibSpec>()
  for (let round = 0; round < cfg.latencyRounds; round++) {
    for (const lib of chosen(cfg, QUORUM)) {
      if (skip(lib) || failed.has(lib)) continue
      try {
        const [w] = await pool.take(1)
        const row = await throughputRun(
          w!,
          lib,
          servers.map((s) => s.url),
          B_SHAPES.one,
          cfg.throughputMs,
          `q50:${lib.kind}:${round}`,
        )
        all.set(row.label, [...(all.get(row.label) ?? []), row])
        log(`  quorum 50 workers ${row.label} round ${round + 1}: ${Math.round(row.cyclesPerSec)} cycles/s`)
      } catch (err) {
        failed.add(lib)
        failures.push({ label: `${libLabel(lib)} (50 workers)`, message: String(err instanceof Error ? err.message : err) })
        log(`  quorum 50 workers ${libLabel(lib)} FAILED: ${String(err)}`)
        await pool.close()
      } finally {
        for (const s of servers) await s.admin.flushall().catch(() => {})
      }
    }
  }
  return [...all.values()].map(medianRound)
}

export async function quorumLatencyAndContention(pool: Pool, servers: Server[], cfg: Config): Promise<QuorumResult> {
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
  const throughput50 = await quorumThroughput(pool, servers, cfg, failures, (lib) => lib.kind === 'fencelock' && fencelock !== 'available')
  return { fencelock, latency, contended, throughput50, failures }
}
