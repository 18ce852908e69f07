// `npm run bench:servers [-- --quick]`: scenarios A (one worker, sequential), B (50 workers on one
// client) and C (contended) of fencelock, the seed and redis-semaphore, once per supported server,
// one after another in one run: the Redis on PATH, Redis 6.2, 7.2, 7.4, Valkey 7.2, 8.0 and Valkey
// 8.0 with `io-threads 2` (builds of ../shared/servers/build.sh). Each server is one `bench/run.ts`
// process (`FENCELOCK_REDIS_SERVER`, `FENCELOCK_REDIS_ARGS`), its results kept in
// bench/results/servers/<server>.json; the table goes to stdout and, for a full run, into its
// section of docs/evidence/benchmark.md.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { serverBinary, type ServerName } from '../harness/servers.js'
import { SERVERS_BEGIN, SERVERS_END, spliceServers } from './report-servers.js'
import type { Results } from './results.js'

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const LIBS = 'fencelock,seed,semaphore'

interface Target {
  readonly id: string
  readonly label: string
  readonly build?: ServerName
  readonly args?: string
}

const TARGETS: readonly Target[] = [
  { id: 'path', label: 'Redis on PATH' },
  { id: 'redis-6.2.16', label: 'Redis 6.2.16', build: 'redis-6.2.16' },
  { id: 'redis-7.2.6', label: 'Redis 7.2.6', build: 'redis-7.2.6' },
  { id: 'redis-7.4.1', label: 'Redis 7.4.1', build: 'redis-7.4.1' },
  { id: 'valkey-7.2.7', label: 'Valkey 7.2.7', build: 'valkey-7.2.7' },
  { id: 'valkey-8.0.1', label: 'Valkey 8.0.1', build: 'valkey-8.0.1' },
  { id: 'valkey-8.0.1-io2', label: 'Valkey 8.0.1, io-threads 2', build: 'valkey-8.0.1', args: '--io-threads 2' },
]

const SHOWN: readonly [string, string][] = [
  ['fencelock', 'fencelock'],
  ['seed', 'seed'],
  ['semaphore', 'redis-semaphore'],
]

/** One server's run of A, B and C; its results file, or why there is none. */
function runOn(target: Target, quick: boolean, dir: string): { file: string } | { missing: string } {
  const env: NodeJS.ProcessEnv = { ...process.env }
  if (target.build) {
    const built = serverBinary(target.build)
    if ('missing' in built) return { missing: built.missing }
    env.FENCELOCK_REDIS_SERVER = built.server
  }
  if (target.args) env.FENCELOCK_REDIS_ARGS = target.args
  const file = path.join(dir, `${target.id}.json`)
  process.stderr.write(`\n== ${target.label}\n`)
  const args = ['tsx', 'bench/run.ts', '--only', 'A,B,C', '--lib', LIBS, '--out', file, '--no-docs', ...(quick ? ['--quick'] : [])]
  const r = spawnSync('npx', args, { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] })
  if (r.status !== 0 || !existsSync(file)) return { missing: `bench/run.ts exited ${r.status}` }
  return { file }
}

const fmt = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '-' : Math.round(n).toLocaleString('en-US'))

/** One row per server: cycles/s of A and B, handoffs/s of C (the tuned row where a library has one), per library. */
function table(runs: { target: Target; results?: Results; missing?: string }[]): string {
  const head = `| server | redis_version | ${SHOWN.map(([, name]) => `A ${name}`).join(' | ')} | ${SHOWN.map(([, name]) => `B ${name}`).join(' | ')} | ${SHOWN.map(([, name]) => `C ${name}`).join(' | ')} |`
  const rule = `|${'---|'.repeat(2 + 3 * SHOWN.length)}`
  const rows = runs.map(({ target, results, missing }) => {
    if (!results) return `| ${target.label} | not run: ${missing ?? '?'} |${' |'.repeat(3 * SHOWN.length)}`
    const a = SHOWN.map(([lib]) => fmt(results.A?.find((r) => r.lib === lib)?.cyclesPerSec))
    const b = SHOWN.map(([lib]) => fmt(results.B?.find((r) => r.lib === lib)?.cyclesPerSec))
    const c = SHOWN.map(([lib]) => {
      const rows = results.C?.filter((r) => r.lib === lib) ?? []
      return fmt((rows.find((r) => r.tuned) ?? rows[0])?.handoffsPerSec)
    })
    return `| ${target.label} | ${results.machine.redis} | ${[...a, ...b, ...c].join(' | ')} |`
  })
  return [head, rule, ...rows].join('\n')
}

function main(): void {
  const argv = process.argv.slice(2)
  const quick = argv.includes('--quick')
  const dir = path.join(root, 'bench', 'results', 'servers')
  mkdirSync(dir, { recursive: true })
  const started = performance.now()
  const runs = TARGETS.map((target) => {
    const run = runOn(target, quick, dir)
    if ('missing' in run) return { target, missing: run.missing }
    return { target, results: JSON.parse(readFileSync(run.file, 'utf8')) as Results }
  })
  const minutes = (performance.now() - started) / 60_000
  const first = runs.find((r) => r.results)?.results
  const cpu = first ? `${first.machine.nproc} cores (${first.machine.cpu}), Node ${first.machine.node}` : ''
  const date = execFileSync('date', ['-u', '+%Y-%m-%d %H:%M UTC'], { encoding: 'utf8' }).trim()
  const section = [
    SERVERS_BEGIN,
    `## Per server (${date}${quick ? ', --quick' : ''})`,
    '',
    `\`npm run bench:servers\`: A (cycles/s, one worker), B (cycles/s, 50 workers on one client) and C`,
    `(handoffs/s, contended; a library's tuned row where it has one) on each server, one server after`,
    `another in one run of ${minutes.toFixed(1)} min, ${cpu}. Servers other than the one on PATH are release`,
    'builds of ../shared/servers/build.sh (libc malloc, no TLS).',
    '',
    table(runs),
    SERVERS_END,
  ].join('\n')
  console.log(section)
  if (!quick) {
    const doc = path.join(root, 'docs', 'evidence', 'benchmark.md')
    writeFileSync(doc, spliceServers(readFileSync(doc, 'utf8'), section))
    process.stderr.write('wrote its section of docs/evidence/benchmark.md\n')
  }
}

main()
