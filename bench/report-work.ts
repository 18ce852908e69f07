// The table of "S at work" (bench/semaphore-work.ts): per setting and library, the medians over
// the rounds of utilization, permits/s, waits, fairness and Redis commands per permit.
import { existsSync, readFileSync } from 'node:fs'
import type { Results, Table } from './results.js'
import { W_LIMIT, W_PROCS, type WorkRow } from './semaphore-work.js'
import type { WorkFigures } from './work-analysis.js'
import { fmt } from './stats.js'

const pct = (v: number) => `${(v * 100).toFixed(1)}%`

export function workTables(r: Results): Table[] {
  if (!r.Swork?.length) return []
  const first = r.Swork[0]
  return [
    {
      title: `S at work: limit ${W_LIMIT}, ${W_PROCS} processes, each permit held around a timer of simulated work, then asked for again at once; ${first?.seconds ?? '?'} s per run, median of ${first?.rounds ?? '?'} interleaved rounds`,
      head: [
        'work',
        'library',
        'utilization',
        'all busy',
        'permits/s',
        'wait p50',
        'wait p99',
        'wait max',
        'heavy wait p99',
        'fairness (Jain)',
        'Redis cmds/permit',
        'client CPU µs/permit',
        'gap p50',
        'gap mean',
        'release p50',
        'release -> wake p50',
        'wake -> acquired p50',
        'Redis µs/script',
        'failed',
      ],
      rows: r.Swork.map((x) => [
        x.setting,
        x.label,
        pct(x.median.utilization),
        pct(x.median.allBusy),
        fmt(x.median.permitsPerSec),
        fmt(x.median.waitP50),
        fmt(x.median.waitP99),
        fmt(x.median.waitMax),
        fmt(x.median.heavyWaitP99),
        fmt(x.median.fairness),
        fmt(x.median.commandsPerPermit),
        fmt(x.median.clientCpuUs),
        fmt(x.median.gapP50),
        fmt(x.median.gapMean),
        fmt(x.median.releaseP50),
        fmt(x.median.toWakeP50),
        fmt(x.median.afterWakeP50),
        fmt(x.median.scriptUs),
        String(x.median.failedAcquires),
      ]),
      note:
        'times in ms. fair: false: a free permit goes to whoever asks first (the releaser asking again included), the waiter first in line passed at most 8 times. utilization: permit-time the workers held (acquire resolved -> release sent) / (limit x window); all busy: share of the window with all permits held. ' +
        "wait: acquire called -> resolved. heavy: the workers taking 3 permits. fairness: Jain's index over the workers' permit counts (1 = equal). " +
        "Redis cmds/permit: INFO commandstats delta (redis.call()s inside Lua included) / acquisitions. gap: a permit freed (release sent) -> the next acquire that took it resolved. release: release sent -> answered. release -> wake: a permit freed -> the wake-up message for the process that took it arrived there (fencelock only: the bench subscribes to the same channel in that process); wake -> acquired: the rest of the gap, the woken acquire's round trip. " +
        "client CPU: all the workers' CPU over the run / acquisitions. Redis µs/script: time Redis spent per EVAL/EVALSHA call (INFO commandstats, acquire and release alike).",
    },
  ]
}

export const WORK_BEGIN = '<!-- S at work: begin (kept by full runs; its figures are from `npm run bench -- --only S`) -->'
export const WORK_END = '<!-- S at work: end -->'

/** The hand-written "S at work" section the page at `doc` has now, if any. */
export function workSection(doc: string): string | undefined {
  if (!existsSync(doc)) return undefined
  const text = readFileSync(doc, 'utf8')
  const at = text.indexOf(WORK_BEGIN)
  const end = text.indexOf(WORK_END)
  return at >= 0 && end > at ? text.slice(at, end + WORK_END.length) : undefined
}

/** `text` with the kept section put back before the tight-loop S table (or at the end). */
export function spliceWork(text: string, section: string | undefined): string {
  if (!section) return text
  const at = text.indexOf('\n## S tight loop')
  if (at < 0) return `${text.trimEnd()}\n\n${section}\n`
  return `${text.slice(0, at + 1)}${section}\n\n${text.slice(at + 1)}`
}

type Add = (id: string, target: string, measured: string, pass: boolean | null) => void

/**
 * Issue 44's targets: at 10 and 100 ms, utilization >= 95% and >= redis-semaphore's (defaults and
 * retry 1 ms) with a lower wait p99 and max; at 1 ms, utilization >= redis-semaphore's at defaults.
 */
export function workTargets(r: Results, add: Add): void {
  const rows = r.Swork ?? []
  // Each of fencelock's rows is judged on its own: the fair FIFO (the default) and fair: false.
  for (const mode of ['fair FIFO', 'fair: false']) {
    for (const holdMs of [1, 10, 100]) {
      const f = rows.find((x) => !x.mixed && x.holdMs === holdMs && x.label === `fencelock semaphore (${mode})`)?.median
      if (f) holdTargets(rows, holdMs, `S work, ${mode}`, f, add)
    }
  }
}

function holdTargets(rows: readonly WorkRow[], holdMs: number, id: string, f: WorkFigures, add: Add): void {
  if (holdMs > 1) add(id, `${holdMs} ms: utilization >= 95%`, pct(f.utilization), f.utilization >= 0.95)
  const peers = rows.filter((x) => !x.mixed && x.holdMs === holdMs && x.label.startsWith('redis-semaphore') && (holdMs > 1 || x.label.includes('defaults')))
  for (const p of peers) {
    add(id, `${holdMs} ms: utilization >= ${p.label}`, `${pct(f.utilization)} vs ${pct(p.median.utilization)}`, f.utilization >= p.median.utilization)
    if (holdMs === 1) continue
    add(
      id,
      `${holdMs} ms: wait p99 and max < ${p.label}`,
      `p99 ${fmt(f.waitP99)} vs ${fmt(p.median.waitP99)} ms, max ${fmt(f.waitMax)} vs ${fmt(p.median.waitMax)} ms`,
      f.waitP99 < p.median.waitP99 && f.waitMax < p.median.waitMax,
    )
  }
}
