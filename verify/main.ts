// `npm run verify`: a Jepsen-style run of fencelock under faults, then a control run with fencing
// off under the same fault schedule, a checker, and an HTML report. See verify/README.md.
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { Redis } from 'ioredis'
import { createLocks, InvalidArgumentError } from '../src/index.js'
import { check, type CheckResult } from './checker.js'
import { findPg } from './pg-target.js'
import { renderReport, verdictLines, type ReportRun } from './report.js'
import { runOnce, type RunOptions } from './run.js'
import { checkSemaphore } from './semaphore-checker.js'
import type { Primitive, SqlGuard } from './config.js'

/** The quick run's seed: its 15 s schedule has every kind of fault, two of them worker pauses. */
export const QUICK_SEED = 35

/**
 * The semaphore's quick run (`--primitive semaphore --quick`): seed 282's 8 s of faults are a worker
 * pause, a Redis kill, a pause until just past the holder's deadline, and a partition.
 */
export const SEMAPHORE_QUICK_SEED = 282
export const SEMAPHORE_QUICK_MS = 8_000

/**
 * The transfer mode's quick run (`--primitive multi --quick`): seed 29's 4.5 s of faults are two
 * pauses of a holder until just past its lease's deadline, and both runs take about 30 s.
 */
export const MULTI_QUICK_SEED = 29
export const MULTI_QUICK_MS = 4_500
/** Transfer mode: how many accounts, each a lock of its own. */
export const MULTI_ACCOUNTS = 4

/** How the semaphore's control run is broken: workers that never check their permit, or one more permit than the limit. */
export type SemaphoreControl = 'expiry' | 'limit'

export interface VerifyOptions {
  seed: number
  /** Chaos phase of each run, ms. */
  chaosMs: number
  quorum: boolean
  nodes: number
  workers: number
  ttl: number
  /** How the fenced run guards its SQL (see WorkerConfig.guard). */
  guard: SqlGuard
  control: boolean
  outDir: string
  quiet: boolean
  /** Default 'mutex' (the bank); 'multi': transfers under acquireAll, one lock per account. */
  primitive?: Primitive
  /** Semaphore mode: the limit (default 2). */
  limit?: number
  /** Semaphore mode: what the control run breaks (default 'expiry'). */
  controlKind?: SemaphoreControl
}

export interface VerifyResult {
  fenced: { check: CheckResult; historyPath: string }
  control?: { check: CheckResult; historyPath: string }
  reportPath: string
  exitCode: number
}

const USAGE = `Usage: npm run verify -- [--quick] [--duration 10m] [--seed N] [--mode single|quorum] [--nodes 3|5]
                         [--workers N] [--ttl ms] [--guard claim|txn] [--no-control] [--out dir]
                         [--primitive mutex|semaphore|multi] [--limit N] [--control expiry|limit]
  --quick       about a minute: 15 s of faults with fencing on, then the control run (seed 35);
                with --primitive semaphore, 8 s of faults per run (seed 282); with --primitive
                multi, 4.5 s of faults per run (seed ${MULTI_QUICK_SEED})
  --duration    length of the fault phase of each run: 90s, 10m, or ms (default 60s)
  --seed        seed of the fault schedule and the workers' choices (default: random, printed)
  --mode        single (one Redis node, default) or quorum (--nodes independent nodes, default 3)
  --guard       claim (default): fence the rows before reading them; txn: the README's pattern,
                read and guarded writes in one transaction (shows why reads need the fence too)
  --no-control  skip the control run with fencing off
  --primitive   mutex (default): the bank under one lock per bank; semaphore: units of work under
                permits of one semaphore, checked against --limit (default 2; --workers default 4);
                multi: transfers between ${MULTI_ACCOUNTS} accounts (one lock each) that lock both accounts with
                acquireAll and claim each row with that account's fence
  --control     semaphore mode: what the control run breaks. expiry (default): workers never check
                their permit's signal or deadline; limit: workers ask for limit + 1 permits`

export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim())
  if (!m) throw new Error(`--duration: expected e.g. 90s, 10m or 600000, got "${text}"`)
  const n = Number(m[1])
  return Math.round(n * ({ ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[m[2] ?? 'ms'] ?? 1))
}

function parseCli(argv: string[]): VerifyOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      duration: { type: 'string' },
      seed: { type: 'string' },
      mode: { type: 'string', default: 'single' },
      nodes: { type: 'string' },
      workers: { type: 'string' },
      ttl: { type: 'string' },
      guard: { type: 'string', default: 'claim' },
      'no-control': { type: 'boolean', default: false },
      out: { type: 'string', default: '.verify' },
      primitive: { type: 'string', default: 'mutex' },
      limit: { type: 'string' },
      control: { type: 'string', default: 'expiry' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  })
  if (values.help) {
    console.log(USAGE)
    process.exit(0)
  }
  if (values.mode !== 'single' && values.mode !== 'quorum') throw new Error(`--mode: expected single or quorum, got "${values.mode}"`)
  const quorum = values.mode === 'quorum'
  if (values.guard !== 'claim' && values.guard !== 'txn') throw new Error(`--guard: expected claim or txn, got "${values.guard}"`)
  const int = (name: string, text: string | undefined, fallback: number) => {
    if (text === undefined) return fallback
    const n = Number(text)
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`--${name}: expected a non-negative integer, got "${text}"`)
    return n
  }
  const nodes = int('nodes', values.nodes, quorum ? 3 : 1)
  if (quorum && nodes !== 3 && nodes !== 5) throw new Error(`--nodes: quorum mode runs 3 or 5 nodes, got ${nodes}`)
  if (!quorum && nodes !== 1) throw new Error('--nodes: single mode runs one node; use --mode quorum for more')
  if (values.primitive !== 'mutex' && values.primitive !== 'semaphore' && values.primitive !== 'multi') throw new Error(`--primitive: expected mutex, semaphore or multi, got "${values.primitive}"`)
  const semaphore = values.primitive === 'semaphore'
  const multi = values.primitive === 'multi'
  if (multi && values.guard !== 'claim') throw new Error('--guard: --primitive multi always claims each row with its fence before reading it (claim)')
  if (values.control !== 'expiry' && values.control !== 'limit') throw new Error(`--control: expected expiry or limit, got "${values.control}"`)
  if (!semaphore && values.limit !== undefined) throw new Error('--limit: only with --primitive semaphore')
  const limit = int('limit', values.limit, 2)
  if (semaphore && limit < 1) throw new Error('--limit: expected at least 1')
  return {
    seed: int('seed', values.seed, values.quick ? (semaphore ? SEMAPHORE_QUICK_SEED : multi ? MULTI_QUICK_SEED : QUICK_SEED) : Math.floor(Math.random() * 1_000_000)),
    chaosMs: values.duration !== undefined ? parseDuration(values.duration) : values.quick ? (semaphore ? SEMAPHORE_QUICK_MS : multi ? MULTI_QUICK_MS : 15_000) : 60_000,
    quorum,
    nodes,
    workers: int('workers', values.workers, 4),
    ttl: int('ttl', values.ttl, 1_000),
    guard: values.guard,
    control: !values['no-control'],
    outDir: values.out!,
    quiet: false,
    ...(semaphore ? { primitive: 'semaphore' as const, limit, controlKind: values.control } : multi ? { primitive: 'multi' as const } : {}),
  }
}

/** Quorum mode needs `createLocks({ redis: [c1, c2, c3] })`; until the library has it, say so plainly. */
export function quorumSupport(): { ok: true } | { ok: false; reason: string } {
  const clients = [0, 1, 2].map(() => new Redis({ lazyConnect: true, port: 1 }))
  try {
    const locks = createLocks({ redis: clients })
    void locks.close().catch(() => {})
    return { ok: true }
  } catch (err) {
    if (err instanceof InvalidArgumentError) return { ok: false, reason: err.message }
    throw err
  } finally {
    for (const c of clients) c.disconnect()
  }
}

function printSummary(label: string, c: CheckResult, log: (s: string) => void): void {
  const s = c.stats
  log(`  ${label}: ${c.violations.length === 0 ? 'no violations' : `${c.violations.length} violation(s)`}`)
  log(`    ${s.ops} operations, ${s.transfers} ${c.semaphore ? 'units of work' : 'transfers'}, ${c.leases.length} ${c.semaphore ? 'permits' : 'leases'} in ${(s.duration / 1000).toFixed(1)} s; faults: ${Object.entries(s.faults).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`)
  for (const v of verdictLines(c)) log(`    ${v.ok === null ? 'info' : v.ok ? ' ok ' : 'FAIL'} ${v.label}: ${v.text}`)
  for (const v of c.violations) log(`    ! ${v}`)
}

export async function verify(options: VerifyOptions): Promise<VerifyResult> {
  const log = options.quiet ? () => {} : (s: string) => console.log(s)
  const tty = !options.quiet && process.stdout.isTTY
  let ticks = 0
  const progress = (line: string) => {
    if (options.quiet) return
    if (tty) process.stdout.write(`\r\x1b[2K${line}`)
    else if (ticks++ % 5 === 0) console.log(line)
  }
  const endProgress = () => tty && process.stdout.write('\r\x1b[2K')

  const semaphore = options.primitive === 'semaphore'
  const multi = options.primitive === 'multi'
  const limit = options.limit ?? 2
  const controlKind = options.controlKind ?? 'expiry'
  // The semaphore's protected work is observed in the history: it needs no PostgreSQL.
  const pgFound = semaphore ? { target: { connectionTimeoutMillis: 3_000 } } : await findPg()
  if (!('target' in pgFound)) throw new Error(pgFound.error)
  if (options.quorum) {
    const support = quorumSupport()
    if (!support.ok) throw new Error(`--mode quorum needs quorum support in fencelock (createLocks({ redis: [c1, c2, c3] })), which this build does not have yet: "${support.reason}"`)
  }

  const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)
  const dir = path.resolve(options.outDir, `${stamp}-seed${options.seed}-${semaphore ? `semaphore${limit}-` : multi ? 'multi-' : ''}${options.quorum ? `quorum${options.nodes}` : 'single'}`)
  mkdirSync(dir, { recursive: true })
  const quick = options.chaosMs <= 20_000
  const base: Omit<RunOptions, 'label' | 'fencing' | 'guard' | 'historyPath'> = {
    seed: options.seed,
    quorum: options.quorum,
    nodes: options.nodes,
    workers: options.workers,
    // Semaphore mode: one semaphore ('bank-0' keeps the nemesis' targeting code as it is), no accounts.
    // Transfer mode: one lock per account.
    resources: semaphore ? 1 : multi ? MULTI_ACCOUNTS : 2,
    accountsPerResource: semaphore ? 0 : multi ? 1 : 4,
    initialBalance: semaphore ? 0 : 1_000,
    ttl: options.ttl,
    warmupMs: 1_500,
    chaosMs: options.chaosMs,
    // Long enough to see recovery even when a killed waiter keeps its queue place (ttl + ~2 s).
    recoverMs: Math.max(options.ttl * 2, options.ttl + 3_000),
    hold: [20, 120],
    pg: pgFound.target,
    progress,
  }
  log(`fencelock verify: seed ${options.seed}, ${options.quorum ? `quorum of ${options.nodes} nodes` : 'single node'}, ${options.workers} workers, ttl ${options.ttl} ms, ` +
    `${semaphore ? `semaphore with limit ${limit}` : multi ? `transfers between ${MULTI_ACCOUNTS} accounts under acquireAll, each row claimed with its account's fence` : `SQL guard '${options.guard}'`}, ` +
    `${(options.chaosMs / 1000).toFixed(0)} s of faults per run${options.control ? `, then the control run${semaphore ? ` (${controlKind})` : ''}` : ''}${quick ? ' (quick)' : ''}`)
  // What a run's workers exercise. Semaphore mode: 1 to 5 units of 30 to 250 ms per permit, so that
  // a permit often outlives its ttl (1 s by default) and is extended.
  const primitiveRun = (checks: boolean, workerLimit: number): Pick<RunOptions, 'primitive' | 'semaphore'> =>
    semaphore ? { primitive: 'semaphore', semaphore: { limit, workerLimit, checks, units: [1, 5], unitMs: [30, 250] } } : multi ? { primitive: 'multi' } : {}
  const checkRun = (run: Awaited<ReturnType<typeof runOnce>>, fencing: boolean): CheckResult =>
    semaphore
      ? checkSemaphore({ events: run.events, final: run.final, ttl: options.ttl, fencing, limit, nodes: options.nodes })
      : check({ events: run.events, final: run.final, ttl: options.ttl, fencing })

  const runs: ReportRun[] = []
  const historyPaths: string[] = []
  const fencedPath = path.join(dir, 'history-fenced.jsonl')
  const fencedLabel = semaphore ? 'checked' : options.guard === 'claim' ? 'fenced' : `fenced (guard: ${options.guard})`
  const fencedRun = await runOnce({ ...base, ...primitiveRun(true, limit), label: fencedLabel, fencing: true, guard: options.guard, historyPath: fencedPath })
  endProgress()
  const fencedCheck = checkRun(fencedRun, true)
  runs.push({ run: fencedRun, check: fencedCheck, expect: 'safe' })
  historyPaths.push(fencedPath)
  log(`  fenced run done: ${fencedCheck.violations.length} violation(s)`)
  for (const e of fencedRun.workerErrors) log(`  worker error: ${e}`)

  let control: VerifyResult['control']
  if (options.control) {
    const controlPath = path.join(dir, 'history-control.jsonl')
    const controlRun = semaphore
      ? await runOnce({ ...base, ...primitiveRun(controlKind !== 'expiry', controlKind === 'limit' ? limit + 1 : limit), label: `control (${controlKind})`, fencing: false, guard: options.guard, historyPath: controlPath })
      : await runOnce({ ...base, ...primitiveRun(false, limit), label: 'control', fencing: false, guard: options.guard, historyPath: controlPath })
    endProgress()
    const controlCheck = checkRun(controlRun, false)
    runs.push({ run: controlRun, check: controlCheck, expect: 'violations' })
    historyPaths.push(controlPath)
    control = { check: controlCheck, historyPath: controlPath }
    log(`  control run done: ${controlCheck.violations.length} violation(s)`)
  }

  const duration = options.chaosMs % 1000 === 0 ? `${options.chaosMs / 1000}s` : `${options.chaosMs}`
  const command = `npm run verify -- --seed ${options.seed} --duration ${duration} --mode ${options.quorum ? 'quorum' : 'single'}` +
    `${options.quorum ? ` --nodes ${options.nodes}` : ''}${options.workers !== 4 ? ` --workers ${options.workers}` : ''}${options.ttl !== 1_000 ? ` --ttl ${options.ttl}` : ''}` +
    `${options.guard !== 'claim' ? ` --guard ${options.guard}` : ''}${options.control ? '' : ' --no-control'}` +
    `${semaphore ? ` --primitive semaphore --limit ${limit}${options.control && controlKind !== 'expiry' ? ` --control ${controlKind}` : ''}` : multi ? ' --primitive multi' : ''}`
  const reportPath = path.join(dir, 'report.html')
  const mode = `${options.quorum ? `quorum (${options.nodes} nodes)` : 'single node'}${semaphore ? `, semaphore (limit ${limit})` : multi ? `, transfers under acquireAll (${MULTI_ACCOUNTS} accounts)` : ''}`
  writeFileSync(reportPath, renderReport({ title: semaphore ? 'fencelock semaphore under faults' : multi ? 'fencelock transfers (acquireAll) under faults' : 'fencelock under faults', command, seed: options.seed, mode, runs, historyPaths: historyPaths.map((p) => path.relative(process.cwd(), p)) }))
  const summary = runs.map((r) => {
    const { leases, overlaps, ...rest } = r.check
    return { label: r.run.options.label, ...rest, overlaps: overlaps.length, leases: leases.length, workerErrors: r.run.workerErrors }
  })
  writeFileSync(path.join(dir, 'summary.json'), JSON.stringify({ seed: options.seed, command, runs: summary }, null, 2))

  const controlCaught = control ? control.check.violations.length > 0 : true
  const exitCode = !fencedCheck.ok ? 1 : !controlCaught ? 3 : 0
  log('')
  log(`=== fencelock verify: ${exitCode === 0 ? 'VERIFIED' : 'NOT VERIFIED'} (seed ${options.seed}) ===`)
  printSummary(semaphore ? 'with permit checks (must be safe)' : 'with fencing (must be safe)', fencedCheck, log)
  if (control) printSummary(semaphore ? `control, ${controlKind === 'expiry' ? 'permit checks off' : `limit ${limit + 1} asked for`} (must show violations)` : 'control, fencing off (must show violations)', control.check, log)
  if (!controlCaught) log('  ! the control run showed no violation: this checker could not fail under this schedule')
  log(`  history: ${fencedPath}${control ? `\n           ${control.historyPath}` : ''}`)
  log(`  report:  ${reportPath}`)
  log(`  replay:  ${command}`)
  return { fenced: { check: fencedCheck, historyPath: fencedPath }, ...(control ? { control } : {}), reportPath, exitCode }
}

const invokedDirectly = process.argv[1] !== undefined && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)
if (invokedDirectly) {
  let options: VerifyOptions
  try {
    options = parseCli(process.argv.slice(2))
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`)
    process.exit(2)
  }
  verify(options).then(
    (result) => process.exit(result.exitCode),
    (err) => {
      console.error(`\nfencelock verify: ${(err as Error).message}`)
      process.exit(2)
    },
  )
}
