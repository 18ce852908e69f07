// Real redis-server processes for tests: no mocks, so failover, expiry and
// cluster redirections behave exactly as in production.
import { spawn, spawnSync, execFile, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { sleep } from './until.js'

const HOST = '127.0.0.1'
const START_TIMEOUT_MS = 5_000
const RESTART_ATTEMPTS = 3
const CLUSTER_TIMEOUT_MS = 20_000
const OUTPUT_TAIL_BYTES = 16_384
// Cluster lookups ask node after node; a paused node must not stall them for long.
const QUERY_TIMEOUT_MS = 1_500

export interface RedisProcess {
  host: string
  port: number
  /** redis://127.0.0.1:PORT */
  url: string
  readonly pid: number
  /** SIGTERM (after SIGCONT if paused), then wait for exit. */
  stop(): Promise<void>
  /** SIGKILL, then wait for exit. */
  kill9(): Promise<void>
  /** SIGSTOP: the process keeps its sockets but answers nothing. */
  pause(): void
  /** SIGCONT */
  resume(): void
  /** Start again on the same port with empty data and a new pid. */
  restart(): Promise<void>
  /** `redis-cli -p PORT ...args`, trimmed stdout; rejects on a Redis error reply. */
  cli(...args: string[]): Promise<string>
  /** The last lines the current process wrote to its log (stdout and stderr), for error messages. */
  log(): string
}

export interface RedisCluster {
  nodes: RedisProcess[]
  /** Nodes that currently act as masters (per CLUSTER NODES of a live node). */
  masters(): Promise<RedisProcess[]>
  stop(): Promise<void>
  slotOf(key: string): Promise<number>
  nodeForSlot(slot: number): Promise<RedisProcess>
  /** beginMigration + finishMigration in one go. */
  migrateSlot(slot: number, to: RedisProcess): Promise<void>
  /** Mark the slot IMPORTING on `to` and MIGRATING on its owner: clients now see ASK for moved keys. */
  beginMigration(slot: number, to: RedisProcess): Promise<void>
  /** MIGRATE the remaining keys and assign the slot to the target on every master. */
  finishMigration(slot: number, to?: RedisProcess): Promise<void>
}

// ---------------------------------------------------------------- helpers

/**
 * Harness ports come from 20000-31999, below the kernel's ephemeral range, in a slice of 1,500 per
 * vitest worker (VITEST_POOL_ID), taken in turn from a random start. So a port given up by a server
 * a test killed on purpose stays free while that test expects nothing there: with `listen(0)`, a
 * proxy or another worker's server in another file could get it at once, and the killed server's
 * client reconnected to that stranger (CI, 7 Dec 2026: "ready" where ECONNREFUSED was expected).
 * Where the ephemeral range reaches down into these ports, the kernel picks (`listen(0)`), as before.
 */
const PORTS = { base: 20_000, slice: 1_500, slices: 8 }
const ownSlice = Number(process.env.VITEST_POOL_ID ?? 0) % PORTS.slices
let nextInSlice = Math.floor(Math.random() * PORTS.slice)

/** The kernel's ephemeral range starts above the harness's ports (read once). */
const belowEphemeral = (() => {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    return low >= PORTS.base + PORTS.slice * PORTS.slices
  } catch {
    return false
  }
})()

/** Listens on `port` (0: any) and closes again: the port it got, or undefined if it was taken. */
const tryListen = (port: number) =>
  new Promise<number | undefined>((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' ? resolve(undefined) : reject(err)))
    server.listen(port, HOST, () => {
      const addr = server.address()
      const got = typeof addr === 'object' && addr ? addr.port : 0
      server.close(() => (got ? resolve(got) : reject(new Error('freePort: no port assigned'))))
    })
  })

export async function freePort(): Promise<number> {
  if (!belowEphemeral) return (await tryListen(0))!
  for (let tried = 0; tried < PORTS.slice; tried++) {
    const port = PORTS.base + ownSlice * PORTS.slice + (nextInSlice++ % PORTS.slice)
    if ((await tryListen(port)) !== undefined) return port
  }
  throw new Error(`freePort: no free port in ${PORTS.base + ownSlice * PORTS.slice}-${PORTS.base + (ownSlice + 1) * PORTS.slice - 1}`)
}

/**
 * Which processes listen on `port` now (`ss`, with their pids and command names), for a test's
 * error message when something answers where nothing should; `ss`'s own error if it cannot say.
 */
export function listenersOn(port: number): string {
  const run = spawnSync('ss', ['-Htlnp', `sport = :${port}`], { encoding: 'utf8', timeout: 5_000 })
  if (run.error || run.status !== 0) return `(ss could not say: ${run.error?.message ?? run.stderr.trim()})`
  return run.stdout.trim().replace(/\s+/g, ' ') || 'nobody'
}

let redisAvailable: boolean | undefined
export function hasRedisServer(): boolean {
  redisAvailable ??= spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0
  return redisAvailable
}

/** For `describe.skipIf(!requireRedisOrSkip())`: CI must never silently skip the real-Redis suites. */
export function requireRedisOrSkip(): boolean {
  if (hasRedisServer()) return true
  const reason = 'redis-server was not found on PATH; the real-Redis test suites need Redis >= 7 installed'
  if (process.env.CI === 'true') {
    throw new Error(`[fencelock tests] ${reason}. In CI this is fatal: install redis-server instead of skipping.`)
  }
  console.warn(`[fencelock tests] skipping Redis suites: ${reason}.`)
  return false
}

/** Raw RESP PING so the harness does not depend on the client libraries under test. */
export function pingRaw(port: number, host = HOST, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port })
    let reply = ''
    const done = (ok: boolean) => {
      clearTimeout(timer)
      socket.destroy()
      resolve(ok)
    }
    const timer = setTimeout(() => done(false), timeoutMs)
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (chunk) => {
      reply += chunk.toString()
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'))
    })
    socket.on('error', () => done(false))
  })
}

/** Raw `INFO server` to learn which process answers on a port (another server may hold it). */
function probePid(port: number, timeoutMs = 250): Promise<number | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: HOST, port })
    let reply = ''
    const done = (pid: number | undefined) => {
      clearTimeout(timer)
      socket.destroy()
      resolve(pid)
    }
    const timer = setTimeout(() => done(undefined), timeoutMs)
    socket.on('connect', () => socket.write('INFO server\r\n'))
    socket.on('data', (chunk) => {
      reply += chunk.toString()
      if (reply.startsWith('-')) return done(undefined) // e.g. -LOADING
      const match = /process_id:(\d+)/.exec(reply)
      if (match) done(Number(match[1]))
    })
    socket.on('error', () => done(undefined))
  })
}

function run(cmd: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: timeoutMs }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${stderr.trim() || stdout.trim() || err.message}`))
      else resolve(stdout.trim())
    })
  })
}

// -e: make redis-cli exit non-zero on an error reply instead of printing it as output.
function redisCli(port: number, args: string[], timeoutMs: number): Promise<string> {
  return run('redis-cli', ['-e', '-h', HOST, '-p', String(port), ...args], timeoutMs)
}

// ------------------------------------------------- process bookkeeping

const live = new Set<ChildProcess>()
/** The tail of each server process's output (see `RedisProcess.log`). */
const outputs = new WeakMap<ChildProcess, () => string>()
const tempDirs = new Set<string>()
let exitHookInstalled = false

// A crashed or forgetful test must not leave servers running: kill synchronously on exit.
/** Another child of the harness (a Sentinel) and its directory, killed and removed with the servers when the process ends. */
export function trackChild(child: ChildProcess, dir?: string): void {
  installExitHook()
  live.add(child)
  child.once('exit', () => live.delete(child))
  if (dir) tempDirs.add(dir)
}

function installExitHook(): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  const cleanup = () => {
    for (const child of live) child.kill('SIGKILL')
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
  }
  process.on('exit', cleanup)
  // vitest ends its fork workers with SIGTERM, which skips 'exit' handlers. Clean up, then
  // re-raise so the default action (terminate) still happens unless someone else handles it.
  process.once('SIGTERM', () => {
    cleanup()
    if (process.listenerCount('SIGTERM') === 0) process.kill(process.pid, 'SIGTERM')
  })
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null
}

function waitForExit(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return Promise.resolve()
  child.ref() // keep the event loop alive while someone awaits the exit
  return new Promise((resolve) => child.once('exit', () => resolve()))
}

// ---------------------------------------------------------- startRedis

/** Waits until every server has been up for `maxTtl` (whole seconds of uptime): a quorum counts a node only then. */
export async function mature(servers: readonly RedisProcess[], maxTtl: number): Promise<void> {
  for (;;) {
    const up = await Promise.all(servers.map(async (s) => Number(/uptime_in_seconds:(\d+)/.exec(await s.cli('INFO', 'server'))?.[1])))
    if (up.every((u) => u * 1000 >= maxTtl)) return
    await new Promise<void>((resolve) => setTimeout(resolve, 100))
  }
}

/**
 * The redis-server binary the harness starts: `FENCELOCK_REDIS_SERVER` (a path, e.g. a build of
 * ../shared/servers/build.sh, to run a suite on another server version), else redis-server on PATH.
 */
export const defaultServer = (): string => process.env.FENCELOCK_REDIS_SERVER || 'redis-server'

/**
 * `server`: the redis-server binary (default: `defaultServer()`); `env`: added to the server's
 * environment, on every start and restart (harness/faketime.ts runs it under libfaketime so).
 */
export async function startRedis(opts: { args?: string[]; port?: number; server?: string; env?: Record<string, string> } = {}): Promise<RedisProcess> {
  const server = opts.server ?? defaultServer()
  if (server === 'redis-server' && !hasRedisServer()) throw new Error('startRedis: redis-server is not on PATH')
  installExitHook()
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-redis-'))
  tempDirs.add(dir)
  const extra = opts.args ?? []

  // freePort() can race with other processes, so retry with a fresh port unless one was requested.
  for (let attempt = 1; ; attempt++) {
    const port = opts.port ?? (await freePort())
    try {
      const child = await spawnServer(port, dir, extra, server, opts.env)
      return makeHandle(port, dir, extra, child, server, opts.env)
    } catch (err) {
      const portClash = err instanceof Error && /Address already in use/i.test(err.message)
      if (!portClash || opts.port !== undefined || attempt >= 3) throw err
    }
  }
}

async function spawnServer(port: number, dir: string, extra: string[], server: string, env?: Record<string, string>): Promise<ChildProcess> {
  // No persistence: a restart must come back empty, like a failed-over node that lost its data.
  rmSync(path.join(dir, 'dump.rdb'), { force: true })
  const args = ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', ...extra]
  const child = spawn(server, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(env ? { env: { ...process.env, ...env } } : {}) })
  live.add(child)
  child.once('exit', () => live.delete(child))

  let tail = ''
  const collect = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-OUTPUT_TAIL_BYTES)
  }
  child.stdout?.on('data', collect)
  child.stderr?.on('data', collect)
  outputs.set(child, () => tail)
  // A leaked server must not keep the test process alive; the exit hook kills it.
  child.unref()
  ;(child.stdout as unknown as net.Socket | null)?.unref()
  ;(child.stderr as unknown as net.Socket | null)?.unref()

  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve))
  const deadline = Date.now() + START_TIMEOUT_MS
  while (Date.now() < deadline) {
    // Match the pid, not just any answer: another server may already own this port.
    if (child.pid !== undefined && (await probePid(port)) === child.pid) return child
    const early = await Promise.race([spawnError, sleep(50).then(() => undefined)])
    if (early || hasExited(child)) {
      throw new Error(`redis-server on port ${port} exited during startup` + `${early ? ` (${early.message})` : ''}:\n${tail}`)
    }
  }
  child.kill('SIGKILL')
  throw new Error(`redis-server on port ${port} did not answer within ${START_TIMEOUT_MS} ms:\n${tail}`)
}

function makeHandle(port: number, dir: string, extra: string[], first: ChildProcess, server: string, env?: Record<string, string>): RedisProcess {
  let child = first
  let paused = false
  const handle: RedisProcess = {
    host: HOST,
    port,
    url: `redis://${HOST}:${port}`,
    get pid() {
      return child.pid ?? -1
    },
    async stop() {
      if (hasExited(child)) return
      // A stopped process cannot handle SIGTERM until it is continued.
      if (paused) child.kill('SIGCONT')
      paused = false
      const exited = waitForExit(child)
      child.kill('SIGTERM')
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000)
      await exited
      clearTimeout(killer)
    },
    async kill9() {
      if (hasExited(child)) return
      paused = false
      const exited = waitForExit(child)
      child.kill('SIGKILL')
      await exited
    },
    pause() {
      child.kill('SIGSTOP')
      paused = true
    },
    resume() {
      child.kill('SIGCONT')
      paused = false
    },
    async restart() {
      await handle.kill9()
      // On its own port, so no fresh port on a failure: up to three tries, a short pause between
      // them (a start that timed out on a loaded machine, a port briefly held by another socket).
      for (let attempt = 1; ; attempt++) {
        try {
          child = await spawnServer(port, dir, extra, server, env)
          return
        } catch (err) {
          if (attempt >= RESTART_ATTEMPTS) throw new Error(`restart of redis-server on port ${port} failed ${attempt} times`, { cause: err })
          await sleep(250 * attempt)
        }
      }
    },
    cli(...args: string[]) {
      return redisCli(port, args, 10_000)
    },
    log() {
      return outputs.get(child)?.() ?? ''
    },
  }
  return handle
}

export interface ReplicatedPair {
  readonly primary: RedisProcess
  readonly replica: RedisProcess
  /** kill -9 of both: nothing is persisted anyway, and a primary told to shut down waits for its replicas. */
  stop(): Promise<void>
}

/** A primary and one replica of it, linked (master_link_status:up) before this resolves. */
export async function startReplicated(): Promise<ReplicatedPair> {
  // No 5 s pause before the first full sync (Redis 7's default for diskless replication).
  const primary = await startRedis({ args: ['--repl-diskless-sync-delay', '0'] })
  const replica = await startRedis({ args: ['--replicaof', primary.host, String(primary.port)] })
  const stop = async () => void (await Promise.all([replica.kill9(), primary.kill9()]))
  for (let i = 0; !(await replica.cli('INFO', 'replication')).includes('master_link_status:up'); i++) {
    if (i >= 200) {
      await stop()
      throw new Error(`the replica on port ${replica.port} did not link to its primary within 10 s`)
    }
    await new Promise<void>((resolve) => setTimeout(resolve, 50))
  }
  return { primary, replica, stop }
}

// -------------------------------------------------------- startCluster

interface NodeLine {
  id: string
  port: number
  flags: string[]
  slots: string[]
}

function parseClusterNodes(text: string): NodeLine[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [id = '', addr = '', flags = '', , , , , , ...slots] = line.trim().split(' ')
      const port = Number(addr.split('@')[0]?.split(':')[1])
      return { id, port, flags: flags.split(','), slots }
    })
}

function ownsSlot(slots: string[], slot: number): boolean {
  return slots.some((s) => {
    if (s.startsWith('[')) return false // [slot->-id] / [slot-<-id]: migration markers, not ownership
    const [lo, hi = lo] = s.split('-').map(Number)
    return lo !== undefined && hi !== undefined && slot >= lo && slot <= hi
  })
}

/** A Redis Cluster of `masters` (default 3) with `replicas` each (default 0), every node also given `args`. */
export async function startCluster(opts: { masters?: number; replicas?: number; args?: string[] } = {}): Promise<RedisCluster> {
  const masterCount = opts.masters ?? 3
  const replicas = opts.replicas ?? 0
  const total = masterCount * (1 + replicas)

  const nodes: RedisProcess[] = []
  try {
    for (let i = 0; i < total; i++) {
      // An explicit bus port: the default port+10000 may be above 65535 or taken.
      const busPort = await freePort()
      const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-cluster-'))
      tempDirs.add(dir)
      nodes.push(
        await startRedis({
          args: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            path.join(dir, 'nodes.conf'),
            '--cluster-node-timeout',
            '2000',
            '--cluster-port',
            String(busPort),
            ...(opts.args ?? []),
          ],
        }),
      )
    }
    await run(
      'redis-cli',
      ['--cluster', 'create', ...nodes.map((n) => `${HOST}:${n.port}`), '--cluster-replicas', String(replicas), '--cluster-yes'],
      CLUSTER_TIMEOUT_MS,
    )
    await waitForClusterOk(nodes)
  } catch (err) {
    await Promise.all(nodes.map((n) => n.kill9()))
    throw err
  }

  const byPort = (port: number) => nodes.find((n) => n.port === port)
  const pending = new Map<number, { from: RedisProcess; to: RedisProcess }>()

  const clusterNodes = async (): Promise<NodeLine[]> => {
    let lastError: unknown
    for (const node of nodes) {
      try {
        return parseClusterNodes(await redisCli(node.port, ['CLUSTER', 'NODES'], QUERY_TIMEOUT_MS))
      } catch (err) {
        lastError = err // node may be stopped or paused by the test: ask the next one
      }
    }
    throw new Error(`no cluster node answered CLUSTER NODES: ${String(lastError)}`)
  }
  const anyCli = async (...args: string[]): Promise<string> => {
    for (const node of nodes) {
      try {
        return await redisCli(node.port, args, QUERY_TIMEOUT_MS)
      } catch {
        /* try the next node */
      }
    }
    throw new Error(`no cluster node answered ${args.join(' ')}`)
  }
  const nodeId = (node: RedisProcess) => node.cli('CLUSTER', 'MYID')

  const cluster: RedisCluster = {
    nodes,
    async masters() {
      const lines = await clusterNodes()
      return lines
        .filter((l) => l.flags.includes('master') && !l.flags.includes('fail'))
        .map((l) => byPort(l.port))
        .filter((n): n is RedisProcess => n !== undefined)
    },
    async stop() {
      await Promise.all(nodes.map((n) => n.stop()))
    },
    async slotOf(key) {
      return Number(await anyCli('CLUSTER', 'KEYSLOT', key))
    },
    async nodeForSlot(slot) {
      const owner = (await clusterNodes()).find((l) => l.flags.includes('master') && ownsSlot(l.slots, slot))
      const node = owner && byPort(owner.port)
      if (!node) throw new Error(`no master owns slot ${slot}`)
      return node
    },
    async beginMigration(slot, to) {
      const from = await cluster.nodeForSlot(slot)
      if (from === to) throw new Error(`slot ${slot} is already on port ${to.port}`)
      // Target first: a client redirected with ASK must find the slot importing there.
      await to.cli('CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', await nodeId(from))
      await from.cli('CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', await nodeId(to))
      pending.set(slot, { from, to })
    },
    async finishMigration(slot, to) {
      const migration = pending.get(slot)
      if (!migration) throw new Error(`finishMigration: slot ${slot} has no migration in progress`)
      if (to && to !== migration.to) throw new Error(`finishMigration: slot ${slot} is migrating elsewhere`)
      const { from } = migration
      for (;;) {
        const keys = (await from.cli('CLUSTER', 'GETKEYSINSLOT', String(slot), '100')).split('\n').filter(Boolean)
        if (keys.length === 0) break
        await from.cli('MIGRATE', HOST, String(migration.to.port), '', '0', '5000', 'KEYS', ...keys)
      }
      const targetId = await nodeId(migration.to)
      // Target, then source, then everyone else, as redis-cli --cluster reshard does.
      const others = (await cluster.masters()).filter((m) => m !== migration.to && m !== from)
      for (const node of [migration.to, from, ...others]) {
        await node.cli('CLUSTER', 'SETSLOT', String(slot), 'NODE', targetId)
      }
      pending.delete(slot)
    },
    async migrateSlot(slot, to) {
      await cluster.beginMigration(slot, to)
      await cluster.finishMigration(slot, to)
    },
  }
  return cluster
}

async function waitForClusterOk(nodes: RedisProcess[]): Promise<void> {
  const deadline = Date.now() + CLUSTER_TIMEOUT_MS
  let states: string[] = []
  while (Date.now() < deadline) {
    states = await Promise.all(
      nodes.map(async (n) => {
        const info = await redisCli(n.port, ['CLUSTER', 'INFO'], QUERY_TIMEOUT_MS).catch((e: Error) => e.message)
        return /cluster_state:(\w+)/.exec(info)?.[1] ?? 'unknown'
      }),
    )
    if (states.every((s) => s === 'ok')) return
    await sleep(100)
  }
  throw new Error(
    `cluster did not reach cluster_state:ok within ${CLUSTER_TIMEOUT_MS} ms; ` + `states by port: ${nodes.map((n, i) => `${n.port}=${states[i]}`).join(', ')}`,
  )
}
