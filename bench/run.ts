// `npm run bench [-- --quick] [-- --only A,C]`: fencelock against its peers, in one run, on
// redis-server processes of its own. Prints the tables; a full run writes bench/results/latest.json,
// docs/evidence/benchmark.md and docs/evidence/bench.svg (a --quick or --only run writes bench/results/quick.json).
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { FULL, QUICK, type Config } from './bench-config.js'
import { K_SIZES } from './cost.js'
import { E_CURVE } from './contention.js'
import { floor } from './latency.js'
import { MEMORY_1M_FILE, memory1m, memory1mText, readMemory1m, spliceMemory1m } from './memory-1m.js'
import { Pool } from './pool.js'
import { redisVersion, startServer, type Server } from './redis.js'
import { renderMarkdown, renderText } from './report.js'
import { serversSection, spliceServers } from './report-servers.js'
import { renderSvg } from './report-svg.js'
import { spliceWork, workSection } from './report-work.js'
import { targets } from './report-targets.js'
import type { Results } from './results.js'
import { ALL, SCENARIOS, type Bench, type Scenario } from './scenarios.js'
import { S_LIMIT, S_PROCS } from './semaphore.js'
import { R_READ_SHARE, T_ACCOUNTS, T_PROCS } from './transfer.js'

function parseArgs(argv: string[]): {
  quick: boolean
  only: Set<Scenario>
  out: string | undefined
  docs: boolean
  libs: Set<string> | undefined
  memory1m: boolean
} {
  let memory1m = false
  let quick = false
  let libs: Set<string> | undefined
  let only: Set<Scenario> | undefined
  let out: string | undefined
  let docs: boolean | undefined
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--quick') quick = true
    else if (arg === '--only' || arg.startsWith('--only=')) {
      const value = arg.includes('=') ? arg.slice(7) : argv[++i]
      const picked = (value ?? '')
        .toUpperCase()
        .split(/[,\s]+/)
        .filter(Boolean)
      for (const p of picked) if (!(ALL as readonly string[]).includes(p)) usage(`unknown scenario "${p}"`)
      only = new Set(picked as Scenario[])
    } else if (arg === '--lib' || arg.startsWith('--lib=')) {
      const value = arg.includes('=') ? arg.slice(6) : argv[++i]
      libs = new Set((value ?? '').split(/[,\s]+/).filter(Boolean))
    } else if (arg === '--out') out = argv[++i]
    else if (arg === '--memory-1m') memory1m = true
    else if (arg === '--docs') docs = true
    else if (arg === '--no-docs') docs = false
    else if (arg === '--help' || arg === '-h') usage()
    else usage(`unknown option "${arg}"`)
  }
  const complete = !quick && !only && !libs && !memory1m
  return { quick, only: only ?? new Set(ALL), out, docs: docs ?? complete, libs, memory1m }
}

function usage(error?: string): never {
  if (error) console.error(`bench: ${error}`)
  console.error(`usage: npm run bench -- [--quick] [--only A,B,C,D,E,F,H,K,L,M,S,T,R,Q,V] [--lib fencelock,seed] [--out file.json] [--docs|--no-docs]
       npm run bench -- --memory-1m [--quick]
  --quick   a few seconds per scenario (development)
  --only    run some scenarios: A latency (and telemetry cost), B throughput, C contended (runs H too), D idle cost,
            E scale (${E_CURVE.map(([p, w]) => `${p * w}`).join(', ')} waiters on one key), F heap memory, H handoff floor (pub/sub wake-up + one round trip),
            K uncontended cost over ${K_SIZES.map((n) => n.toLocaleString('en-US')).join(', ')} resources, L renewals (one process, many auto-extended leases),
            M Redis memory per resource (100,000 resources locked once),
            S semaphore (limit ${S_LIMIT}, ${S_PROCS} processes), T transfers (${T_PROCS} processes, ${T_ACCOUNTS} accounts,
            two locked at once), R read-heavy (${Math.round(R_READ_SHARE * 100)}% reads, read/write lock vs mutex), Q quorum,
            V revocation (revoke() to the holder's signal, one Redis and a quorum of 3)
  --lib     only some libraries: fencelock,seed,redlock4,redlock5,sesame,semaphore,semaphore-redlock
  --memory-1m  only fencelock's Redis memory over 1,000,000 resources (takes a minute or two); writes
            ${MEMORY_1M_FILE} and its dated section of docs/evidence/benchmark.md (with --quick: 100,000, docs untouched)
  --render file.json [--docs]   print (and write the docs) again from a saved run
  --docs    also write docs/evidence/benchmark.md and docs/evidence/bench.svg (default only for a full run)
  FENCELOCK_BENCH_BEFORE=dir   pair another build (a copy of dist/ made before a change) against this one:
            its row "fencelock before" runs beside fencelock's in A, B, C and Q, round by round; the build
            loaded second runs slower whichever it is: run again with the places swapped and take the
            geometric mean of the two ratios (docs/evidence/benchmark-notes.md, "One path")`)
  process.exit(error ? 2 : 0)
}

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.join(here, '..')
const log = (line: string) => process.stderr.write(`${line}\n`)

function cpuModel(): string {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))
    if (m?.[1]) return m[1].trim()
  } catch {}
  return os.cpus()[0]?.model ?? 'unknown CPU'
}

function nproc(): number {
  try {
    return Number(execFileSync('nproc', { encoding: 'utf8' }).trim())
  } catch {
    return os.availableParallelism()
  }
}

/** docs/evidence/benchmark.md from a run, with the 1M-resource and per-server sections it had kept. */
function writeBenchmarkDoc(results: Results): void {
  const doc = path.join(root, 'docs', 'evidence', 'benchmark.md')
  const kept = serversSection(doc)
  const work = workSection(doc)
  writeFileSync(doc, spliceWork(spliceServers(spliceMemory1m(renderMarkdown(results), readMemory1m(path.join(root, MEMORY_1M_FILE))), kept), work))
}

/** `--render file.json`: tables, targets, docs again from a saved run (no Redis, no workers). */
function render(file: string, docs: boolean): void {
  const results = JSON.parse(readFileSync(file, 'utf8')) as Results
  results.targets = targets(results)
  console.log(renderText(results))
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
  if (docs) {
    writeBenchmarkDoc(results)
    writeFileSync(path.join(root, 'docs', 'evidence', 'bench.svg'), renderSvg(results))
    log('wrote docs/evidence/benchmark.md and docs/evidence/bench.svg')
  }
}

/** `--memory-1m`: fencelock's Redis memory over 1,000,000 resources, kept apart from the full run. */
async function runMemory1m(quick: boolean): Promise<void> {
  const t0 = performance.now()
  const pool = new Pool()
  const server = await startServer()
  try {
    const machine = {
      nproc: nproc(),
      cpu: cpuModel(),
      node: process.versions.node,
      redis: await redisVersion(server),
      date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      mode: quick ? ('quick' as const) : ('full' as const),
      scenarios: 'M (1M)',
    }
    log(
      `fencelock bench --memory-1m${quick ? ' --quick (100,000 resources)' : ''}: ${machine.nproc} cores, ${machine.cpu}, Node ${machine.node}, Redis ${machine.redis}`,
    )
    const result = await memory1m(pool, server, machine, quick)
    result.machine.seconds = (performance.now() - t0) / 1000
    console.log(memory1mText(result))
    const file = path.join(root, quick ? 'bench/results/quick.json' : MEMORY_1M_FILE)
    mkdirSync(path.dirname(file), { recursive: true })
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`)
    log(`wrote ${path.relative(process.cwd(), file)}`)
    if (!quick) {
      const doc = path.join(root, 'docs', 'evidence', 'benchmark.md')
      writeFileSync(doc, spliceMemory1m(readFileSync(doc, 'utf8'), result))
      log('wrote its section of docs/evidence/benchmark.md')
    }
  } finally {
    await pool.close()
    await server.stop()
  }
}

type Args = ReturnType<typeof parseArgs>

function newResults(args: Args): Results {
  return {
    machine: {
      nproc: nproc(),
      cpu: cpuModel(),
      node: process.versions.node,
      redis: '?',
      date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      mode: args.quick ? 'quick' : 'full',
      scenarios: [...args.only].join(','),
    },
    errors: [],
    notRun: [
      {
        lib: 'redlock-universal',
        reason: `requires Node >= 22; this machine runs Node ${process.versions.node}`,
      },
    ],
  }
}

/** Runs one scenario; one that fails is reported and the run goes on: one broken peer must not hide the rest. */
function stepRunner(pool: Pool, servers: Server[], results: Results) {
  return async (name: string, fn: () => Promise<void>) => {
    const began = performance.now()
    try {
      await fn()
      log(`  (${name}: ${Math.round((performance.now() - began) / 1000)} s)`)
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      log(`  ${name} FAILED: ${message}`)
      results.errors.push({ scenario: name, message })
      await pool.close() // workers may be mid-task: start the next scenario with fresh ones
      for (const s of servers) await s.admin.flushall().catch(() => {})
    }
  }
}

/** The floor, then every selected scenario, on redis-server processes of the run's own. */
async function measure(args: Args, cfg: Config, results: Results): Promise<void> {
  const pool = new Pool()
  const servers: Server[] = []
  const start = async () => {
    const s = await startServer()
    servers.push(s)
    return s
  }
  try {
    const main = await start()
    results.machine.redis = await redisVersion(main)
    log(
      `fencelock bench (${results.machine.mode}; scenarios ${results.machine.scenarios}): ${results.machine.nproc} cores, ${results.machine.cpu}, Node ${results.machine.node}, Redis ${results.machine.redis}`,
    )
    const step = stepRunner(pool, servers, results)
    log('floor: PING and SET+EVAL round trips')
    await step('floor', async () => {
      results.floor = await floor(pool, main, cfg)
    })
    const bench: Bench = { pool, main, cfg, results, start }
    for (const scenario of SCENARIOS) {
      if (!(scenario.runs?.(args.only) ?? args.only.has(scenario.id))) continue
      log(scenario.heading(cfg))
      await step(scenario.id, () => scenario.measure(bench))
    }
  } finally {
    await pool.close()
    await Promise.all(servers.map((s) => s.stop()))
  }
}

/** The targets, the tables on stdout, the JSON, and (a full run, or --docs) docs/evidence/benchmark.md and docs/evidence/bench.svg. */
function publish(args: Args, results: Results): void {
  results.targets = targets(results)
  console.log(renderText(results))
  const outFile = args.out ?? path.join(here, 'results', args.quick || args.libs || args.only.size < ALL.length ? 'quick.json' : 'latest.json')
  mkdirSync(path.dirname(outFile), { recursive: true })
  writeFileSync(outFile, `${JSON.stringify(results, null, 2)}\n`)
  log(`\nwrote ${path.relative(process.cwd(), outFile)}`)
  if (args.docs) {
    mkdirSync(path.join(root, 'docs', 'evidence'), { recursive: true })
    writeBenchmarkDoc(results)
    writeFileSync(path.join(root, 'docs', 'evidence', 'bench.svg'), renderSvg(results))
    log('wrote docs/evidence/benchmark.md and docs/evidence/bench.svg')
  }
}

async function main(): Promise<void> {
  const renderAt = process.argv.indexOf('--render')
  if (renderAt >= 0) {
    const file = process.argv[renderAt + 1]
    if (!file) usage('--render needs a results file')
    return render(file, process.argv.includes('--docs'))
  }
  const args = parseArgs(process.argv.slice(2))
  if (args.memory1m) return runMemory1m(args.quick)
  const cfg = { ...(args.quick ? QUICK : FULL), ...(args.libs ? { libs: args.libs } : {}) }
  const t0 = performance.now()
  const results = newResults(args)
  await measure(args, cfg, results)
  results.machine.seconds = (performance.now() - t0) / 1000
  publish(args, results)
  log(`total ${Math.round(results.machine.seconds)} s`)
}

process.on('SIGINT', () => process.exit(130))
process.on('SIGTERM', () => process.exit(143))
main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err)
    process.exit(1)
  },
)
