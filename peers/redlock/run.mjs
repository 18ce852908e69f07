#!/usr/bin/env node
// node-redlock's and @sesamecare-oss/redlock's own public test suites (vendored unchanged in v4/,
// v5/ and fork/, see README.md), run twice each: against the original library, and against
// fencelock/redlock with only the import changed. The suites were written for docker-compose
// hosts (redis-single-instance, ...) or Redis on 6379; this script starts its own redis-server
// processes (and one-node clusters) on free ports and rewrites only those connection lines in
// copies under .run/. Prints pass/fail counts per suite and target, and the failing titles.
//
//   node peers/redlock/run.mjs [--only v4|v5-single|v5-multi|fork-system|fork-unit] [--target original|drop-in]
//
// Needs `npm install` in peers/redlock (its own node_modules) and a build of fencelock (it runs
// `npx tsup` in the repository first: the drop-in is tested as published, dist/redlock.*).
import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, '../..')
const bin = (name) => path.join(here, 'node_modules', '.bin', name)
const args = process.argv.slice(2)
const option = (name) => {
  const i = args.indexOf(name)
  return i === -1 ? undefined : args[i + 1]
}

// ---- redis-server processes -------------------------------------------------------------------

const servers = []
const scratch = mkdtempSync(path.join(os.tmpdir(), 'fencelock-peers-'))

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const cli = (port, ...command) => execFileSync('redis-cli', ['-p', String(port), ...command], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()

async function startRedis(extra = []) {
  const port = await freePort()
  const dir = path.join(scratch, String(port))
  mkdirSync(dir)
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extra], {
    stdio: 'ignore',
  })
  servers.push(child)
  for (let i = 0; i < 100; i++) {
    try {
      if (cli(port, 'PING') === 'PONG') return port
    } catch {}
    await sleep(50)
  }
  throw new Error(`redis-server on ${port} did not start`)
}

/** A Redis Cluster of one master that owns every slot (what the suites' docker clusters are to them). */
async function startCluster() {
  const port = await startRedis(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-announce-ip', '127.0.0.1'])
  cli(port, 'CLUSTER', 'ADDSLOTSRANGE', '0', '16383')
  for (let i = 0; i < 100 && !cli(port, 'CLUSTER', 'INFO').includes('cluster_state:ok'); i++) await sleep(50)
  return port
}

function stopAll() {
  for (const child of servers) child.kill('SIGKILL')
  rmSync(scratch, { recursive: true, force: true })
}

// ---- the suites ---------------------------------------------------------------------------------

const dropIn = { cjs: path.join(repo, 'dist', 'redlock.cjs'), esm: path.join(repo, 'dist', 'redlock.js') }

/**
 * Each suite: its files, the import line rewritten per target, the connection lines rewritten to
 * the servers started here, and how its runner reports. `ports` is filled in before it runs.
 */
const suites = [
  {
    name: 'v4',
    origin: 'node-redlock v4.2.0 test.js (mocha; node_redis 3 and ioredis 4 clients)',
    files: ['v4/test.js'],
    needs: async () => ({ single: await startRedis() }),
    import: { from: "require('./redlock')", original: "require('redlock')", 'drop-in': `require(${JSON.stringify(dropIn.cjs)})` },
    connect: (text, { single }) =>
      text
        .replaceAll("require('redis').createClient()", `require('redis').createClient({port: ${single}})`)
        .replaceAll("require('redis').createClient({string_numbers: true})", `require('redis').createClient({port: ${single}, string_numbers: true})`)
        .replaceAll("new (require('ioredis'))()", `new (require('ioredis'))({port: ${single}})`)
        .replace(/new \(require\('ioredis'\)\)\(\{db: (\d)\}\)/g, `new (require('ioredis'))({port: ${single}, db: $1})`),
    run: (dir) => mochaRun(dir, 'test.js'),
  },
  {
    name: 'v5-single',
    origin: 'node-redlock v5.0.0-beta.2 src/single.test.ts (ava; ioredis 4, one instance and one cluster)',
    files: ['v5/single.test.ts'],
    needs: async () => ({ single: await startRedis(), cluster: await startCluster(), dead: await freePort() }),
    import: { from: 'from "./index.js"', original: 'from "redlock5"', 'drop-in': `from ${JSON.stringify(dropIn.esm)}` },
    connect: (text, { single, cluster, dead }) =>
      text
        .replace('new Redis({ host: "redis-single-instance" })', `new Redis({ host: "127.0.0.1", port: ${single} })`)
        .replace('new Cluster([{ host: "redis-single-cluster-1" }])', `new Cluster([{ host: "127.0.0.1", port: ${cluster} }])`)
        // "unreachable": nothing listens there (the suite meant a host without Redis, not 6379).
        .replace('host: "127.0.0.1",\n        maxRetriesPerRequest', `host: "127.0.0.1",\n        port: ${dead},\n        maxRetriesPerRequest`),
    run: (dir) => avaRun(dir, 'single.test.ts'),
  },
  {
    name: 'v5-multi',
    origin: 'node-redlock v5.0.0-beta.2 src/multi.test.ts (ava; three instances, three clusters)',
    files: ['v5/multi.test.ts'],
    needs: async () => ({
      a: await startRedis(),
      b: await startRedis(),
      c: await startRedis(),
      ca: await startCluster(),
      cb: await startCluster(),
      cc: await startCluster(),
    }),
    import: { from: 'from "./index.js"', original: 'from "redlock5"', 'drop-in': `from ${JSON.stringify(dropIn.esm)}` },
    connect: (text, p) =>
      ['a', 'b', 'c'].reduce(
        (t, x) =>
          t
            .replaceAll(`new Redis({ host: "redis-multi-instance-${x}" })`, `new Redis({ host: "127.0.0.1", port: ${p[x]} })`)
            .replaceAll(`new Cluster([{ host: "redis-multi-cluster-${x}-1" }])`, `new Cluster([{ host: "127.0.0.1", port: ${p[`c${x}`]} }])`)
            .replaceAll(`host: "redis-multi-instance-${x}"`, `host: "127.0.0.1", port: ${p[x]}`),
        text,
      ),
    run: (dir) => avaRun(dir, 'multi.test.ts'),
  },
  {
    name: 'fork-system',
    origin: '@sesamecare-oss/redlock v1.4.0 src/system.spec.ts (vitest; ioredis 5, instance db 0 and 2, one cluster)',
    files: ['fork/system.spec.ts'],
    needs: async () => ({ single: await startRedis(), cluster: await startCluster(), dead: await freePort() }),
    import: { from: "from './index'", original: "from '@sesamecare-oss/redlock'", 'drop-in': `from ${JSON.stringify(dropIn.esm)}` },
    connect: (text, { single, cluster, dead }) =>
      text
        .replaceAll("from 'ioredis'", "from 'ioredis5'")
        .replace("new Redis({ host: 'redis-single-instance' })", `new Redis({ host: '127.0.0.1', port: ${single} })`)
        .replace("new Cluster([{ host: 'redis-single-cluster-1' }])", `new Cluster([{ host: '127.0.0.1', port: ${cluster} }])`)
        .replace('port: 6380,', `port: ${dead},`),
    run: (dir) => vitestRun(dir, 'system.spec.ts'),
  },
  {
    name: 'fork-unit',
    origin: '@sesamecare-oss/redlock v1.4.0 src/unit.spec.ts (vitest; a mocked ioredis, no server)',
    files: ['fork/unit.spec.ts'],
    needs: async () => ({}),
    import: { from: "from './index'", original: "from '@sesamecare-oss/redlock'", 'drop-in': `from ${JSON.stringify(dropIn.esm)}` },
    connect: (text) => text.replaceAll("'ioredis'", "'ioredis5'"),
    run: (dir) => vitestRun(dir, 'unit.spec.ts'),
  },
]

// ---- runners: each returns { passed, failed, failures: [title] } ----------------------------------

function capture(command, argv, cwd, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, argv, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    const timer = setTimeout(() => child.kill('SIGKILL'), 600_000)
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('close', (code) => {
      clearTimeout(timer)
      writeFileSync(path.join(cwd, 'output.txt'), `${out}\n--- stderr ---\n${err}`)
      resolve({ code, out, err })
    })
  })
}

async function mochaRun(dir, file) {
  const report = path.join(dir, 'report.json')
  const { out, err } = await capture(bin('mocha'), ['--exit', '--timeout', '10000', '--reporter', 'json', '--reporter-option', `output=${report}`, file], dir)
  try {
    const json = JSON.parse(readFileSync(report, 'utf8'))
    return { passed: json.stats.passes, failed: json.stats.failures, failures: json.failures.map((f) => `${f.fullTitle}: ${firstLine(f.err?.message)}`) }
  } catch {
    return { passed: 0, failed: 1, failures: [`mocha did not report: ${tail(err || out)}`] }
  }
}

async function avaRun(dir, file) {
  const { out, err } = await capture(bin('ava'), ['--verbose', '--timeout=60s', '--serial', file], dir, { FORCE_COLOR: '0' })
  const text = `${out}\n${err}`
  const passed = [...text.matchAll(/^\s*✔ (.*)$/gm)].length
  // Not tests: the suites leave their clients open, so ava reports a timeout once all have run.
  const failures = [...text.matchAll(/^\s*✘ (.*)$/gm)]
    .map((m) => m[1])
    .filter((f) => !/^Timed out while running tests|exited with a non-zero exit code/.test(f))
  if (passed + failures.length === 0) return { passed, failed: 1, failures: [`ava did not report: ${tail(text)}`] }
  return { passed, failed: failures.length, failures }
}

async function vitestRun(dir, file) {
  const report = path.join(dir, 'report.json')
  const vitest = path.join(repo, 'node_modules', 'vitest', 'vitest.mjs')
  // A config of its own: without one, vitest would take the repository's (which includes test/ only).
  const config = path.join(dir, 'vitest.config.mjs')
  writeFileSync(config, `export default { test: { include: [${JSON.stringify(file)}], testTimeout: 60000 } }\n`)
  const { out, err } = await capture(process.execPath, [vitest, 'run', '--root', dir, '--config', config, '--reporter=json', `--outputFile=${report}`], dir)
  try {
    const json = JSON.parse(readFileSync(report, 'utf8'))
    const tests = json.testResults.flatMap((r) => r.assertionResults)
    const failures = tests.filter((t) => t.status === 'failed').map((t) => `${t.fullName}: ${firstLine(t.failureMessages?.[0])}`)
    if (tests.length === 0) failures.push(...json.testResults.map((r) => firstLine(r.message)))
    return { passed: json.numPassedTests, failed: json.numFailedTests + (tests.length === 0 ? 1 : 0), failures }
  } catch {
    return { passed: 0, failed: 1, failures: [`vitest did not report: ${tail(err || out)}`] }
  }
}

const firstLine = (text) =>
  String(text ?? '')
    .split('\n')[0]
    .slice(0, 200)
const tail = (text) => text.trim().split('\n').slice(-5).join(' | ').slice(0, 600)

// ---- main ---------------------------------------------------------------------------------------

/** A copy of the suite with the import and the connections rewritten; refuses a rewrite that matched nothing. */
function prepare(suite, target, ports) {
  const dir = path.join(here, '.run', `${suite.name}-${target}`)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  for (const file of suite.files) {
    const original = readFileSync(path.join(here, file), 'utf8')
    if (!original.includes(suite.import.from)) throw new Error(`${file}: the import ${suite.import.from} is not there`)
    const text = suite.connect(original.replaceAll(suite.import.from, suite.import[target]), ports)
    writeFileSync(path.join(dir, path.basename(file)), text)
  }
  // ava: TypeScript through tsx; vitest reads its own defaults (no config here).
  writeFileSync(
    path.join(dir, 'package.json'),
    `${JSON.stringify({ private: true, type: suite.name === 'v4' ? 'commonjs' : 'module', ava: { extensions: { ts: 'module' }, nodeArguments: ['--import=tsx'], workerThreads: false } }, null, 2)}\n`,
  )
  return dir
}

async function main() {
  const only = option('--only')
  const targets = option('--target') ? [option('--target')] : ['original', 'drop-in']
  if (targets.includes('drop-in')) execFileSync('npx', ['tsup', '--silent'], { cwd: repo, stdio: 'inherit' })
  const rows = []
  for (const suite of suites.filter((s) => !only || s.name === only)) {
    for (const target of targets) {
      const ports = await suite.needs()
      const dir = prepare(suite, target, ports)
      const started = Date.now()
      const result = await suite.run(dir)
      rows.push({ suite: suite.name, target, ...result, seconds: Math.round((Date.now() - started) / 1000) })
      console.log(
        `${suite.name.padEnd(12)} ${target.padEnd(9)} passed ${String(result.passed).padStart(3)}  failed ${String(result.failed).padStart(3)}  (${rows.at(-1).seconds} s)`,
      )
      for (const f of result.failures) console.log(`    not ok: ${f}`)
    }
  }
  console.log('\nsuite        target    passed failed')
  for (const r of rows) console.log(`${r.suite.padEnd(12)} ${r.target.padEnd(9)} ${String(r.passed).padStart(6)} ${String(r.failed).padStart(6)}`)
  writeFileSync(path.join(here, '.run', 'results.json'), `${JSON.stringify(rows, null, 2)}\n`)
}

main()
  .catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(stopAll)
