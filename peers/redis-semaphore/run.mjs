// Runs redis-semaphore's vendored public suite against redis-semaphore and against
// fencelock/redis-semaphore: three redis-server processes of its own on free ports (REDIS_URI1..3),
// mocha once per target, then the pass / fail counts and the failing titles of each.
//   node run.mjs [original|drop-in]   (default: both)
import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '../..')
const targets = process.argv[2] ? [process.argv[2]] : ['original', 'drop-in']

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

const run = (cmd, args, options = {}) =>
  new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.once('exit', (code) => resolve({ code, out, err }))
  })

async function startServers() {
  const ports = []
  for (let i = 0; i < 3; i++) {
    let port
    do port = await freePort()
    while (ports.includes(port))
    ports.push(port)
  }
  for (const port of ports) {
    const started = await run('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--daemonize', 'yes'])
    if (started.code !== 0) throw new Error(`redis-server on ${port}: ${started.err || started.out}`)
  }
  for (const port of ports) {
    for (let i = 0; (await run('redis-cli', ['-p', String(port), 'ping'])).out.trim() !== 'PONG'; i++) {
      if (i > 100) throw new Error(`redis-server on ${port} does not answer`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  return ports
}

const stopServers = (ports) => Promise.all(ports.map((port) => new Promise((r) => execFile('redis-cli', ['-p', String(port), 'shutdown', 'nosave'], r))))

async function suite(target, ports, dir) {
  const report = path.join(dir, `${target}.json`)
  const env = { ...process.env, RS_TARGET: target }
  ports.forEach((port, i) => (env[`REDIS_URI${i + 1}`] = `redis://127.0.0.1:${port}`))
  const mocha = path.join(here, 'node_modules/mocha/bin/mocha.js')
  const done = await run(process.execPath, [mocha, '--reporter', 'json', '--reporter-option', `output=${report}`], { cwd: here, env })
  if (!existsSync(report)) throw new Error(`mocha (${target}) wrote no report: exit ${done.code}\n${done.err.slice(-3000)}`)
  return JSON.parse(readFileSync(report, 'utf8'))
}

if (!existsSync(path.join(root, 'dist/redis-semaphore.cjs'))) {
  console.log('building fencelock (dist/redis-semaphore.cjs is missing) ...')
  const built = await run('npm', ['run', 'build'], { cwd: root })
  if (built.code !== 0) throw new Error(`npm run build failed:\n${built.err.slice(-3000)}`)
}
const dir = mkdtempSync(path.join(tmpdir(), 'rs-peer-'))
const ports = await startServers()
let failed = 0
try {
  for (const target of targets) {
    const { stats, failures } = await suite(target, ports, dir)
    failed += stats.failures
    console.log(`${target}: ${stats.passes} passing, ${stats.failures} failing, ${stats.pending} pending (${stats.tests} tests)`)
    for (const f of failures) console.log(`  failing: ${f.fullTitle}\n    ${String(f.err?.message ?? '').split('\n')[0]}`)
  }
} finally {
  await stopServers(ports)
  rmSync(dir, { recursive: true, force: true })
}
process.exitCode = failed === 0 ? 0 : 1
