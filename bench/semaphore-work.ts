// S at work: semaphores as users run them. 16 processes, limit 4, each permit held around a timer
// of simulated work (1, 10, 100 ms), then asked for again at once; one setting mixes workers that
// take 1 permit with workers that take 3. The libraries run interleaved, setting by setting, for a
// few rounds, and each figure is the median over the rounds (the machine is shared and noisy).
import type { Config } from './bench-config.js'
import type { Pool } from './pool.js'
import { counters, delta, type Server } from './redis.js'
import { percentile } from './stats.js'
import { analyseWork, type WorkFigures } from './work-analysis.js'
import type { WorkLib, WorkSections } from './work-tasks.js'
import { clock } from './stats.js'

export const W_PROCS = 16
export const W_LIMIT = 4
export const W_HOLDS = [1, 10, 100] as const
/** The mixed setting: this many of the 16 workers take 3 permits at a time, the others 1. */
export const W_HEAVY = 4
export const W_MIXED_HOLD = 10

export const WORK_LIBS: WorkLib[] = [
  { kind: 'fencelock' },
  { kind: 'fencelock', fair: false },
  { kind: 'semaphore' },
  { kind: 'semaphore', retry: 1 },
  { kind: 'seed' },
]
/** The seed's SET NX loop has no weighted permits: the mixed setting runs without it. */
const MIXED_LIBS = WORK_LIBS.filter((l) => l.kind !== 'seed')

export interface WorkRow {
  setting: string
  holdMs: number
  mixed: boolean
  label: string
  rounds: number
  seconds: number
  /** Medians over the rounds. */
  median: WorkFigures
  /** Every round's figures, in run order. */
  each: WorkFigures[]
}

export function workLabel(spec: WorkLib): string {
  if (spec.kind === 'fencelock') return spec.fair === false ? 'fencelock semaphore (fair: false)' : 'fencelock semaphore (fair FIFO)'
  if (spec.kind === 'seed') return 'seed SET NX loop, 4 slot keys, 100 ms sleep'
  return spec.retry === undefined ? 'redis-semaphore Semaphore (defaults: 10 ms)' : `redis-semaphore Semaphore (retry ${spec.retry} ms)`
}

const log = (line: string) => process.stderr.write(`${line}\n`)

async function workOnce(pool: Pool, server: Server, lib: WorkLib, holdMs: number, mixed: boolean, ms: number): Promise<WorkFigures> {
  const workers = await pool.take(W_PROCS)
  const name = `w:${lib.kind}${lib.fair === false ? '-unfair' : ''}:${lib.retry ?? 'd'}:${holdMs}:${mixed ? 'm' : '1'}`
  const permitsOf = (i: number) => (mixed && i < W_HEAVY ? 3 : 1)
  // Every worker connects and warms up (one permit, no work) before the shared start.
  await Promise.all(workers.map((w, i) => w.run({ type: 'work-open', lib, url: server.url, name, limit: W_LIMIT, permits: permitsOf(i) })))
  const before = await counters(server)
  const scriptsBefore = await scriptUsec(server)
  const startAt = clock() + 300
  const endAt = startAt + ms
  const sections = await Promise.all(workers.map((w) => w.run<WorkSections>({ type: 'work-run', holdMs, startAt, endAt })))
  const used = delta(await counters(server), before)
  const scripts = await scriptUsec(server)
  await server.admin.flushall()
  const scriptUs = (scripts.usec - scriptsBefore.usec) / Math.max(1, scripts.calls - scriptsBefore.calls)
  const figures = analyseWork(
    sections.map((s, i) => ({ permits: permitsOf(i), sections: s })),
    W_LIMIT,
    startAt,
    endAt,
    used.commands,
  )
  return { ...figures, scriptUs }
}

/** Time Redis spent inside EVAL/EVALSHA (every script of the run, acquire and release alike). */
async function scriptUsec(server: Server): Promise<{ calls: number; usec: number }> {
  const text = (await server.admin.info('commandstats')) as string
  let calls = 0
  let usec = 0
  for (const m of text.matchAll(/^cmdstat_(?:eval|evalsha):calls=(\d+),usec=(\d+)/gm)) {
    calls += Number(m[1])
    usec += Number(m[2])
  }
  return { calls, usec }
}

function medianOf(each: WorkFigures[]): WorkFigures {
  const first = each[0]!
  const out = { ...first, errors: each.flatMap((e) => e.errors).slice(0, 3), failedAcquires: each.reduce((a, e) => a + e.failedAcquires, 0) }
  for (const key of Object.keys(first) as (keyof WorkFigures)[]) {
    const values = each.map((e) => e[key]).filter((v): v is number => typeof v === 'number')
    if (key === 'failedAcquires' || values.length === 0) continue
    // A round without the figure where others have it (the heavy workers served no permit in the
    // window): it waited longer than any, so it counts as infinite, not as missing.
    while (values.length < each.length) values.push(Number.POSITIVE_INFINITY)
    ;(out as Record<string, unknown>)[key] = percentile(values, 50)
  }
  return out
}

/** Every setting, the libraries interleaved within each round; medians over `rounds`. */
export async function semaphoresAtWork(pool: Pool, server: Server, cfg: Config): Promise<WorkRow[]> {
  // BENCH_WORK_MS and BENCH_WORK_ROUNDS (development): another window or number of rounds.
  const ms = Number(process.env.BENCH_WORK_MS) || (cfg.quick ? 1_500 : 4_000)
  const rounds = Number(process.env.BENCH_WORK_ROUNDS) || (cfg.quick ? 1 : 3)
  // BENCH_WORK_SETTINGS (development): some settings only, e.g. `10,100,mixed`.
  const only = process.env.BENCH_WORK_SETTINGS?.split(',')
  const settings = [...W_HOLDS.map((holdMs) => ({ holdMs, mixed: false, libs: WORK_LIBS })), { holdMs: W_MIXED_HOLD, mixed: true, libs: MIXED_LIBS }].filter(
    (s) => !only || only.includes(s.mixed ? 'mixed' : String(s.holdMs)),
  )
  const each = new Map<string, { setting: string; holdMs: number; mixed: boolean; label: string; figures: WorkFigures[] }>()
  for (let round = 0; round < rounds; round++) {
    for (const s of settings) {
      const setting = s.mixed ? `${s.holdMs} ms, ${W_HEAVY} workers x 3 permits + ${W_PROCS - W_HEAVY} x 1` : `${s.holdMs} ms`
      for (const lib of cfg.libs ? s.libs.filter((l) => cfg.libs?.has(l.kind)) : s.libs) {
        const f = await workOnce(pool, server, lib, s.holdMs, s.mixed, ms)
        const label = workLabel(lib)
        log(
          `  S at work ${setting}, ${label}: utilization ${(f.utilization * 100).toFixed(1)}%, ${f.permitsPerSec.toFixed(0)} permits/s, wait p50 ${f.waitP50.toFixed(1)} p99 ${f.waitP99.toFixed(1)} max ${f.waitMax.toFixed(1)} ms, Jain ${f.fairness.toFixed(3)}, ${f.commandsPerPermit.toFixed(1)} commands/permit, ${f.failedAcquires} failed, gap p50 ${f.gapP50?.toFixed(2) ?? '-'} ms (release -> wake ${f.toWakeP50?.toFixed(2) ?? '-'}, wake -> acquired ${f.afterWakeP50?.toFixed(2) ?? '-'})`,
        )
        const key = `${setting}|${label}`
        const entry = each.get(key) ?? { setting, holdMs: s.holdMs, mixed: s.mixed, label, figures: [] }
        entry.figures.push(f)
        each.set(key, entry)
      }
    }
  }
  return [...each.values()].map(({ figures, ...e }) => ({ ...e, rounds: figures.length, seconds: ms / 1000, median: medianOf(figures), each: figures }))
}
