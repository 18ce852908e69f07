// The contended scenarios: C (8 processes on one key, the handoffs between them) and E (the scale
// curve, 2 to 128 waiters on one key); contend() is one such run, quorum mode's too.
import { chosen, CONTENDED, isTuned, type Config } from './bench-config.js'
import { analyseContention, emptyRow, type ContendRow } from './contend-analysis.js'
import { libLabel, type LibSpec } from './libs.js'
import type { Pool } from './pool.js'
import { counters, delta, type Counters, type Server } from './redis.js'
import { clock } from './stats.js'
import type { Sections } from './worker.js'

const log = (line: string) => process.stderr.write(`${line}\n`)

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
    workers.map((w, i) =>
      w.run<Sections>({ type: 'contend-run', key: opts.key, counterKey, concurrency: opts.perProc, startAt, endAt, ttl: 10_000, worker: i }),
    ),
  )
  const used = delta(await sumCounters(), before)
  const counter = Number((await servers[0]!.admin.get(counterKey)) ?? 0)
  for (const s of servers) await s.admin.flushall()
  const row = analyseContention(base, parts, used, counter, startAt, endAt)
  row.errors.unshift(...warmErrors)
  return row
}

function mergeCounts(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out = { ...a }
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v
  return out
}

export async function contendedHandoffs(pool: Pool, server: Server, cfg: Config): Promise<ContendRow[]> {
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

export async function waitersScaleCurve(pool: Pool, server: Server, cfg: Config, peer: LibSpec): Promise<ContendRow[]> {
  const rows: ContendRow[] = []
  for (const lib of chosen(cfg, [{ kind: 'fencelock' }, peer])) {
    for (const [procs, perProc] of E_CURVE) {
      const row = await contend(pool, [server], lib, { procs, perProc, ms: cfg.scaleMs, key: `e:${lib.kind}:${procs}x${perProc}` })
      log(
        `  E ${row.label} ${procs}x${perProc}: ${Math.round(row.handoffsPerSec)} handoffs/s, gap p50 ${row.gapP50.toFixed(2)} ms, ${row.wirePerHandoff.toFixed(2)} wire/handoff`,
      )
      rows.push(row)
    }
  }
  await pool.shrink(8)
  return rows
}
