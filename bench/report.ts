// The report of a run: its tables in order, as console text and as docs/evidence/benchmark.md. The tables
// of each kind of scenario, the targets and the SVG chart are in the report-*.ts files.
import { costTables } from './report-cost.js'
import { contendedTables, quorumTables, readHeavyTables, scaleTables, semaphoreTables, transferTables } from './report-contended.js'
import { workTables } from './report-work.js'
import { revocationTables } from './report-revocation.js'
import { floorTables, heapTables, idleTables, latencyTables, throughputTables } from './report-uncontended.js'
import type { Results, Table } from './results.js'

/** The targets, the scenarios that failed, the errors inside contended runs, the libraries not run. */
function runTables(r: Results): Table[] {
  const out: Table[] = []
  if (r.targets?.length) {
    out.push({
      title: 'Targets (fencelock vs the same run)',
      head: ['scenario', 'target', 'measured', 'result'],
      rows: r.targets.map((t) => [t.id, t.target, t.measured, t.pass === null ? 'n/a' : t.pass ? 'PASS' : 'FAIL']),
    })
  }
  if (r.errors.length) {
    out.push({ title: 'Scenarios that failed in this run', head: ['scenario', 'error'], rows: r.errors.map((x) => [x.scenario, x.message]) })
  }
  const rowErrors = [...(r.C ?? []), ...(r.E ?? []), ...(r.quorum?.contended ?? [])].filter((x) => x.errors.length > 0)
  if (rowErrors.length) {
    out.push({
      title: 'Errors inside contended runs (first few per row)',
      head: ['library', 'procs x waiters', 'errors'],
      rows: rowErrors.map((x) => [x.label, `${x.procs} x ${x.perProc}`, x.errors.slice(0, 3).join(' / ')]),
    })
  }
  if (r.notRun.length) {
    out.push({ title: 'Not run', head: ['library', 'reason'], rows: r.notRun.map((x) => [x.lib, x.reason]) })
  }
  return out
}

function tables(r: Results): Table[] {
  return [
    ...floorTables(r),
    ...latencyTables(r),
    ...throughputTables(r),
    ...contendedTables(r),
    ...idleTables(r),
    ...scaleTables(r),
    ...heapTables(r),
    ...workTables(r),
    ...semaphoreTables(r),
    ...transferTables(r),
    ...readHeavyTables(r),
    ...quorumTables(r),
    ...costTables(r),
    ...revocationTables(r),
    ...runTables(r),
  ]
}

export function renderText(r: Results): string {
  const lines: string[] = []
  for (const t of tables(r)) {
    const widths = t.head.map((h, i) => Math.max(h.length, ...t.rows.map((row) => (row[i] ?? '').length)))
    const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')
    lines.push('', t.title, line(t.head), widths.map((w) => '-'.repeat(w)).join('  '), ...t.rows.map(line))
    if (t.note) lines.push(`(${t.note})`)
  }
  return lines.join('\n')
}

export function renderMarkdown(r: Results): string {
  const m = r.machine
  const esc = (s: string) => s.replace(/\|/g, '\\|')
  const out: string[] = [
    '# fencelock benchmark',
    '',
    'Produced by `npm run bench` (bench/run.ts): one run that starts its own `redis-server` processes on free ports and measures',
    'fencelock and its peers side by side. Raw numbers: [`bench/results/latest.json`](../../bench/results/latest.json). Chart: [`bench.svg`](bench.svg).',
    '',
    `Machine: ${m.nproc} cores (\`nproc\`), ${m.cpu}; Node ${m.node}; Redis ${m.redis}. Run: ${m.date}, ${m.mode} mode${m.seconds ? `, ${Math.round(m.seconds)} s` : ''}.`,
    'The machine is shared, so absolute numbers move between runs; every comparison below is within this one run.',
    '',
    '![benchmark chart](bench.svg)',
    '',
    'Run it: `npm run bench` (everything, about 11 minutes on 2 cores; writes this page, the chart and the JSON);',
    '`npm run bench -- --quick --only A` (a few seconds; `--only` takes A-F, H, K, L, M, S, T, R, Q and V, `--lib` takes library kinds, quick runs write',
    '`bench/results/quick.json` and leave this page alone); `npm run bench -- --memory-1m` (M over 1,000,000 resources, fencelock only, a few',
    'minutes; rewrites only its own dated section at the end of this page). What the numbers of this run mean, and what to change in fencelock:',
    '[benchmark-notes.md](benchmark-notes.md).',
    '',
    'How it measures:',
    '- Every library uses ioredis. Peers: `redlock` 4.2, `redlock5` (5.0.0-beta.2), `@sesamecare-oss/redlock` 1.4, `redis-semaphore` 5.8 `Mutex`/`RedlockMutex` (and its `Semaphore` in S),',
    "  and the seed article's hand-written algorithm (SET NX PX with a random token, EVAL compare-and-delete release, sleep-and-retry).",
    '- "defaults" = the library as installed; "retry 10 ms" = its fastest sensible retry (Redlock family: retryDelay 10, retryJitter 5, retryCount 200: the same ~2 s window as its defaults of 10 x 200 ms).',
    '  redis-semaphore retries every 10 ms by default, so its defaults are also its tuned setting.',
    '- A and B have a reference row, "fencelock\'s scripts sent by hand": fencelock\'s acquire and release scripts with its default arguments,',
    '  sent with nothing of the library around them. It is not a peer (the targets leave it out): its distance to the seed is what the scripts',
    "  cost in Redis, its distance to fencelock's row what fencelock's JavaScript costs.",
    '- Times between processes use one clock, CLOCK_MONOTONIC (`process.hrtime`), shared by all processes of the machine (`performance.timeOrigin + performance.now()` was measured to differ by up to ~1 ms between processes).',
    '- *wire commands* are counted in each client at `sendCommand` (INFO commandstats also counts every `redis.call()` inside a Lua script, so it',
    '  cannot tell wire commands apart); *Redis commands* are INFO commandstats deltas and include those in-script calls.',
    "- Cost per lock (issue 12): A shows client CPU per cycle beside the seed's and fencelock again with a subscriber on every `fencelock:*`",
    "  diagnostics channel; H measures the handoff floor (a pub/sub wake-up plus one round trip between two processes) and C's gaps are shown",
    '  in multiples of it; E is a scale curve of 2 to 128 waiters on one key; K the uncontended cost over 10 to 100,000 resources; L one process',
    "  holding 50,000 auto-extended leases; M the Redis memory per resource locked once. Each new figure sits in a table beside the peers'",
    "  with the issue's target.",
    '- A and B report the median of three interleaved rounds (all rounds are in the JSON): the machine is shared, and load elsewhere',
    '  moves loopback round trips both ways (a busy CPU even wakes up sooner than an idle one).',
    '',
  ]
  for (const t of tables(r)) {
    out.push(`## ${t.title}`, '', `| ${t.head.map(esc).join(' | ')} |`, `| ${t.head.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`)
    for (const row of t.rows) out.push(`| ${row.map(esc).join(' | ')} |`)
    out.push('')
    if (t.note) out.push(`<sub>${t.note}</sub>`, '')
  }
  return out.join('\n')
}
