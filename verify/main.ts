// `npm run verify`: a Jepsen-style run of fencelock under faults, then a control run with fencing
// off under the same fault schedule, a checker, and an HTML report. See verify/README.md.
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Redis } from 'ioredis'
import { createLocks, InvalidArgumentError } from '../src/index.js'
import { clockTools } from '../harness/faketime.js'
import { check, type CheckResult } from './checker.js'
import { CONTROL_FENCE_RETENTION, type ClockRun } from './clock-faults.js'
import { checkElection } from './election-checker.js'
import {
  controlReplicas,
  ELECTION_ROUNDS,
  defaultTtl,
  guardedReplicas,
  MULTI_ACCOUNTS,
  parseCli,
  USAGE,
  type SemaphoreControl,
  type VerifyOptions,
} from './options.js'
import { findPg, type PgTarget } from './pg-target.js'
import { renderReport, verdictLines, type ReportRun } from './report.js'
import { runOnce, type RunOptions, type RunResult } from './run.js'
import { checkSemaphore } from './semaphore-checker.js'

export {
  ELECTION_QUICK_MS,
  ELECTION_QUICK_SEED,
  FAILOVER_QUICK_MS,
  FAILOVER_QUICK_SEED,
  MULTI_ACCOUNTS,
  MULTI_QUICK_MS,
  MULTI_QUICK_SEED,
  parseDuration,
  QUICK_SEED,
  SEMAPHORE_QUICK_MS,
  SEMAPHORE_QUICK_SEED,
} from './options.js'
export type { SemaphoreControl, VerifyOptions } from './options.js'

export interface VerifyResult {
  fenced: { check: CheckResult; historyPath: string }
  /** The last control run; `attempts` counts the runs it took to show its damage, see caughtDamage (or CONTROL_ATTEMPTS when none did). */
  control?: { check: CheckResult; historyPath: string; attempts: number }
  reportPath: string
  exitCode: number
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
  log(
    `    ${s.ops} operations, ${s.transfers} ${c.semaphore ? 'units of work' : c.election ? 'accepted writes' : 'transfers'}, ${c.leases.length} ${c.semaphore ? 'permits' : c.election ? 'terms' : 'leases'} in ${(s.duration / 1000).toFixed(1)} s; faults: ${
      Object.entries(s.faults)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none'
    }`,
  )
  for (const v of verdictLines(c)) log(`    ${v.ok === null ? 'info' : v.ok ? ' ok ' : 'FAIL'} ${v.label}: ${v.text}`)
  for (const v of c.violations) log(`    ! ${v}`)
}

/** What the options make of a run: the primitive, the semaphore's limit and its broken control. */
interface Kind {
  semaphore: boolean
  multi: boolean
  election: boolean
  limit: number
  controlKind: SemaphoreControl
}

const kindOf = (options: VerifyOptions): Kind => ({
  semaphore: options.primitive === 'semaphore',
  multi: options.primitive === 'multi',
  election: options.primitive === 'election',
  limit: options.limit ?? 2,
  controlKind: options.controlKind ?? 'expiry',
})

interface Output {
  log: (s: string) => void
  /** A one-line status, rewritten in place on a terminal, every fifth line otherwise. */
  progress: (line: string) => void
  endProgress: () => void
}

function outputOf(quiet: boolean): Output {
  const tty = !quiet && process.stdout.isTTY
  let ticks = 0
  return {
    log: quiet ? () => {} : (s: string) => console.log(s),
    progress: (line: string) => {
      if (quiet) return
      if (tty) process.stdout.write(`\r\x1b[2K${line}`)
      else if (ticks++ % 5 === 0) console.log(line)
    },
    endProgress: () => tty && process.stdout.write('\r\x1b[2K'),
  }
}

/** The bank's PostgreSQL (the semaphore's protected work is observed in the history: it needs none; the election's leaders write to it), and quorum support when asked for. */
async function preflight(options: VerifyOptions, kind: Kind): Promise<PgTarget> {
  const pgFound = kind.semaphore ? { target: { connectionTimeoutMillis: 3_000 } } : await findPg()
  if (!('target' in pgFound)) throw new Error(pgFound.error)
  if (options.quorum) {
    const support = quorumSupport()
    if (!support.ok)
      throw new Error(
        `--mode quorum needs quorum support in fencelock (createLocks({ redis: [c1, c2, c3] })), which this build does not have yet: "${support.reason}"`,
      )
  }
  return pgFound.target
}

function runDirectory(options: VerifyOptions, kind: Kind): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)
  const dir = path.resolve(
    options.outDir,
    `${stamp}-seed${options.seed}-${kind.semaphore ? `semaphore${kind.limit}-` : kind.multi || kind.election ? `${options.primitive}-` : ''}${options.failover ? (options.replicaNodes === 2 ? 'failover2' : 'failover') : options.quorum ? `quorum${options.nodes}` : 'single'}`,
  )
  mkdirSync(dir, { recursive: true })
  return dir
}

type BaseRun = Omit<RunOptions, 'label' | 'fencing' | 'guard' | 'historyPath'>

function baseRun(options: VerifyOptions, kind: Kind, pg: PgTarget, progress: (line: string) => void): BaseRun {
  return {
    seed: options.seed,
    quorum: options.quorum,
    ...(options.failover ? { failover: true } : {}),
    ...(options.replicaNodes === 2 ? { replicaNodes: 2 as const } : {}),
    nodes: options.nodes,
    workers: options.workers,
    // Semaphore mode: one semaphore ('bank-0' keeps the nemesis' targeting code as it is), no accounts.
    // Transfer mode: one lock per account. Election mode: one election, one row (a counter from 0).
    // Failover mode: six banks, so that a lock is often granted with nobody queued behind it (queue
    // places replicated before the cut keep a lost lock's line until about its deadline).
    resources: kind.semaphore || kind.election ? 1 : kind.multi ? MULTI_ACCOUNTS : options.failover ? 6 : 2,
    accountsPerResource: kind.semaphore ? 0 : kind.multi || kind.election ? 1 : 4,
    initialBalance: kind.semaphore || kind.election ? 0 : 1_000,
    ttl: options.ttl,
    warmupMs: 1_500,
    chaosMs: options.chaosMs,
    // Long enough to see recovery even when a killed waiter keeps its queue place (ttl + ~2 s).
    recoverMs: Math.max(options.ttl * 2, options.ttl + 3_000),
    hold: [20, 120],
    pg,
    progress,
  }
}

function announcement(options: VerifyOptions, kind: Kind): string {
  const quick = options.chaosMs <= 20_000
  return (
    `fencelock verify: seed ${options.seed}, ${options.failover ? `a primary, ${options.replicaNodes === 2 ? 'two replicas' : 'a replica'} and three Sentinels` : options.quorum ? `quorum of ${options.nodes} nodes` : 'single node'}, ${options.workers} workers, ttl ${options.ttl} ms, ` +
    `${kind.semaphore ? `semaphore with limit ${kind.limit}` : kind.election ? 'an election whose leaders write to one row guarded by their term' : kind.multi ? `transfers between ${MULTI_ACCOUNTS} accounts under acquireAll, each row claimed with its account's fence` : `SQL guard '${options.guard}'`}, ` +
    `${(options.chaosMs / 1000).toFixed(0)} s of faults per run${options.clock ? ' (with a server clock step)' : ''}${options.control ? `, then the control run${kind.semaphore ? ` (${kind.controlKind})` : ''}` : ''}${quick ? ' (quick)' : ''}`
  )
}

/**
 * What a run's workers exercise. Semaphore mode: 1 to 5 units of 30 to 250 ms per permit, so that
 * a permit often outlives its ttl (1 s by default) and is extended.
 */
function primitiveRun(kind: Kind, checks: boolean, workerLimit: number): Pick<RunOptions, 'primitive' | 'semaphore' | 'election'> {
  if (kind.election) return { primitive: 'election', election: { rounds: ELECTION_ROUNDS } }
  return kind.semaphore
    ? { primitive: 'semaphore', semaphore: { limit: kind.limit, workerLimit, checks, units: [1, 5], unitMs: [30, 250] } }
    : kind.multi
      ? { primitive: 'multi' }
      : {}
}

function checkRun(options: VerifyOptions, kind: Kind, run: RunResult, fencing: boolean): CheckResult {
  if (kind.election) return checkElection({ events: run.events, final: run.final, ttl: options.ttl, fencing })
  return kind.semaphore
    ? checkSemaphore({ events: run.events, final: run.final, ttl: options.ttl, fencing, limit: kind.limit, nodes: options.nodes })
    : check({ events: run.events, final: run.final, ttl: options.ttl, fencing, ...(options.failover ? { exclusive: true } : {}) })
}

/** The control run: fencing off (mutex, multi, election: unguarded writes), or the semaphore broken as `controlKind` says. */
function controlRun(options: VerifyOptions, kind: Kind, base: BaseRun, historyPath: string, attempt: number): Promise<RunResult> {
  const { controlKind, limit } = kind
  const again = attempt > 1 ? `, attempt ${attempt}` : ''
  return kind.semaphore
    ? runOnce({
        ...base,
        ...primitiveRun(kind, controlKind !== 'expiry', controlKind === 'limit' ? limit + 1 : limit),
        label: `control (${controlKind}${again})`,
        fencing: false,
        ...clockRun(options, 'past-retention'),
        guard: options.guard,
        historyPath,
      })
    : runOnce({
        ...base,
        ...primitiveRun(kind, false, limit),
        label: `control${options.failover ? ` (${controlLabel(options)})` : ''}${attempt > 1 ? ` (attempt ${attempt})` : ''}`,
        // Failover mode: the same fenced bank, only `replicas` left out (with two replicas: one
        // acknowledgement asked for, not two); the failover alone must break it.
        fencing: options.failover === true,
        ...(options.failover && controlReplicas(options) ? { replicas: controlReplicas(options)! } : {}),
        ...clockRun(options, 'past-retention'),
        guard: options.guard,
        historyPath,
      })
}

/** What the failover control run leaves out: `replicas` altogether, or (two replicas) the second acknowledgement. */
const controlLabel = (options: VerifyOptions): string => (controlReplicas(options) ? `replicas: ${controlReplicas(options)!.count}` : 'no replicas')

/** Clock faults in a run (when on): the guarded run steps back and jumps past the real clock, the control past its short fence retention. */
function clockRun(options: VerifyOptions, kind: ClockRun['kind']): { clock?: ClockRun } {
  if (!options.clock) return {}
  return { clock: kind === 'steps' ? { kind } : { kind, fenceRetention: CONTROL_FENCE_RETENTION } }
}

/** Clock faults asked for but libfaketime or the libc-malloc build missing: off, with the reason (in CI clockTools throws). */
function clockChecked(options: VerifyOptions, log: (s: string) => void): VerifyOptions {
  if (!options.clock) return options
  const tools = clockTools()
  if (!('missing' in tools)) return options
  log(`  server clock faults off: ${tools.missing}`)
  return { ...options, clock: false }
}

/** The clock step's own damage: fences not above ones granted before, or handed out twice (verify/fence-order.ts). */
const FENCE_DAMAGE = /got a fence not above one granted before|fences handed out twice/

/**
 * A control run shows what it exists to show: a safety violation, (a), that the guarded run must
 * not have; with server clock faults on, also the clock step's own, fences out of order. A step
 * back can miss (no fence key was written while the clock was behind, so none expires early), and
 * a control that missed it proves nothing about the checker's view of clocks: it is run again.
 */
export const caughtDamage = (check: Pick<CheckResult, 'violations'>, clock: boolean): boolean =>
  check.violations.some((v) => v.startsWith('(a)')) && (!clock || check.violations.some((v) => FENCE_DAMAGE.test(v)))

/** How many times the control run is tried before it counts as showing nothing. */
export const CONTROL_ATTEMPTS = 3

/**
 * The control run, tried again (same seed, same schedule) while it shows no safety violation, at
 * most CONTROL_ATTEMPTS times. Whether a pause lands between a holder's read and its write is a
 * matter of timing on a busy machine; a control whose faults all missed proves nothing about the
 * checker, so it is run again, and every attempt is logged and kept in the report.
 */
async function controlRuns(
  options: VerifyOptions,
  kind: Kind,
  base: BaseRun,
  dir: string,
  runs: ReportRun[],
  log: (s: string) => void,
  endProgress: () => void,
): Promise<NonNullable<VerifyResult['control']>> {
  let control: NonNullable<VerifyResult['control']> | undefined
  for (let attempt = 1; attempt <= CONTROL_ATTEMPTS; attempt++) {
    const historyPath = path.join(dir, attempt === 1 ? 'history-control.jsonl' : `history-control-${attempt}.jsonl`)
    const run = await controlRun(options, kind, base, historyPath, attempt)
    endProgress()
    control = { check: checkRun(options, kind, run, options.failover === true), historyPath, attempts: attempt }
    runs.push({ run, check: control.check, expect: 'violations' })
    log(`  control run done: ${control.check.violations.length} violation(s)${attempt > 1 ? ` (attempt ${attempt} of ${CONTROL_ATTEMPTS})` : ''}`)
    if (caughtDamage(control.check, options.clock === true)) break
    if (attempt < CONTROL_ATTEMPTS)
      log(
        `  the control run showed no ${options.clock && caughtDamage(control.check, false) ? 'fences out of order (its clock step expired no fence key)' : 'safety violation (its faults missed the holders)'}; running it again`,
      )
  }
  return control!
}

/** The command that runs this verification again, flags at their defaults left out. */
function replayCommand(options: VerifyOptions, kind: Kind): string {
  const duration = options.chaosMs % 1000 === 0 ? `${options.chaosMs / 1000}s` : `${options.chaosMs}`
  return (
    `npm run verify -- --seed ${options.seed} --duration ${duration} --mode ${options.failover ? 'failover' : options.quorum ? 'quorum' : 'single'}${options.replicaNodes === 2 ? ' --replica-nodes 2' : ''}` +
    `${options.quorum ? ` --nodes ${options.nodes}` : ''}${options.workers !== 4 ? ` --workers ${options.workers}` : ''}${options.ttl !== defaultTtl(options) ? ` --ttl ${options.ttl}` : ''}` +
    `${options.guard !== 'claim' ? ` --guard ${options.guard}` : ''}${options.control ? '' : ' --no-control'}${options.clock ? ' --clock' : ''}` +
    `${kind.semaphore ? ` --primitive semaphore --limit ${kind.limit}${options.control && kind.controlKind !== 'expiry' ? ` --control ${kind.controlKind}` : ''}` : kind.multi || kind.election ? ` --primitive ${options.primitive}` : ''}`
  )
}

/** report.html and summary.json in the run's directory; returns the report's path. */
function writeOutputs(dir: string, options: VerifyOptions, kind: Kind, command: string, runs: ReportRun[], historyPaths: string[]): string {
  const reportPath = path.join(dir, 'report.html')
  const mode = `${options.failover ? `failover (a primary, ${options.replicaNodes === 2 ? 'two replicas' : 'a replica'}, three Sentinels)` : options.quorum ? `quorum (${options.nodes} nodes)` : 'single node'}${kind.semaphore ? `, semaphore (limit ${kind.limit})` : kind.multi ? `, transfers under acquireAll (${MULTI_ACCOUNTS} accounts)` : kind.election ? ', leader election' : ''}`
  const title = kind.semaphore
    ? 'fencelock semaphore under faults'
    : kind.multi
      ? 'fencelock transfers (acquireAll) under faults'
      : kind.election
        ? 'fencelock leader election under faults'
        : 'fencelock under faults'
  writeFileSync(
    reportPath,
    renderReport({ title, command, seed: options.seed, mode, runs, historyPaths: historyPaths.map((p) => path.relative(process.cwd(), p)) }),
  )
  const summary = runs.map((r) => {
    const { leases, overlaps, ...rest } = r.check
    return { label: r.run.options.label, ...rest, overlaps: overlaps.length, leases: leases.length, workerErrors: r.run.workerErrors }
  })
  writeFileSync(path.join(dir, 'summary.json'), JSON.stringify({ seed: options.seed, command, runs: summary }, null, 2))
  return reportPath
}

function printVerdict(
  log: (s: string) => void,
  options: VerifyOptions,
  kind: Kind,
  exitCode: number,
  fenced: VerifyResult['fenced'],
  control: VerifyResult['control'],
): void {
  log('')
  log(`=== fencelock verify: ${exitCode === 0 ? 'VERIFIED' : 'NOT VERIFIED'} (seed ${options.seed}) ===`)
  printSummary(
    kind.semaphore
      ? 'with permit checks (must be safe)'
      : options.failover
        ? `with fencing and replicas: ${guardedReplicas(options).count} (must be safe)`
        : 'with fencing (must be safe)',
    fenced.check,
    log,
  )
  if (control)
    printSummary(
      kind.semaphore
        ? `control, ${kind.controlKind === 'expiry' ? 'permit checks off' : `limit ${kind.limit + 1} asked for`} (must show violations)`
        : options.failover
          ? `control, ${controlLabel(options)} (must show violations)`
          : 'control, fencing off (must show violations)',
      control.check,
      log,
    )
  if (control && !caughtDamage(control.check, options.clock === true))
    log(
      `  ! ${control.attempts} control runs showed no ${options.clock && caughtDamage(control.check, false) ? 'fences out of order' : 'safety violation'}: this checker could not fail under this schedule`,
    )
  log(`  history: ${fenced.historyPath}${control ? `\n           ${control.historyPath}` : ''}`)
}

export async function verify(asked: VerifyOptions): Promise<VerifyResult> {
  const { log, progress, endProgress } = outputOf(asked.quiet)
  const options = clockChecked(asked, log)
  const kind = kindOf(options)
  const pg = await preflight(options, kind)
  const dir = runDirectory(options, kind)
  const base = baseRun(options, kind, pg, progress)
  log(announcement(options, kind))

  const runs: ReportRun[] = []
  const fencedPath = path.join(dir, 'history-fenced.jsonl')
  const fencedLabel = kind.semaphore ? 'checked' : options.guard === 'claim' ? 'fenced' : `fenced (guard: ${options.guard})`
  const fencedRun = await runOnce({
    ...base,
    ...primitiveRun(kind, true, kind.limit),
    label: options.failover ? `fenced (replicas: ${guardedReplicas(options).count})` : fencedLabel,
    fencing: true,
    ...clockRun(options, 'steps'),
    ...(options.failover ? { replicas: guardedReplicas(options) } : {}),
    guard: options.guard,
    historyPath: fencedPath,
  })
  endProgress()
  const fenced = { check: checkRun(options, kind, fencedRun, true), historyPath: fencedPath }
  runs.push({ run: fencedRun, check: fenced.check, expect: 'safe' })
  log(`  fenced run done: ${fenced.check.violations.length} violation(s)`)
  for (const e of fencedRun.workerErrors) log(`  worker error: ${e}`)

  const control = options.control ? await controlRuns(options, kind, base, dir, runs, log, endProgress) : undefined

  const command = replayCommand(options, kind)
  const reportPath = writeOutputs(
    dir,
    options,
    kind,
    command,
    runs,
    runs.map((r) => r.run.options.historyPath),
  )
  const controlCaught = control ? caughtDamage(control.check, options.clock === true) : true
  const exitCode = !fenced.check.ok ? 1 : !controlCaught ? 3 : 0
  printVerdict(log, options, kind, exitCode, fenced, control)
  log(`  report:  ${reportPath}`)
  log(`  replay:  ${command}`)
  return { fenced, ...(control ? { control } : {}), reportPath, exitCode }
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
