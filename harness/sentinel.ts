// A primary, one replica (or two) and three real `redis-server --sentinel` processes watching them,
// with short timeouts so a failover takes a few seconds: for tests and the fault harness's failover mode.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { faketimeEnv, serverClock, type ServerClock } from './faketime.js'
import { defaultServer, freePort, pingRaw, startRedis, trackChild, type RedisProcess } from './redis-server.js'
import { sleep } from './until.js'

const HOST = '127.0.0.1'
/** The name the Sentinels monitor the primary under (`new Redis({ sentinels, name })`). */
export const SENTINEL_MASTER = 'fencelock'
/**
 * How long a primary may be silent before a Sentinel thinks it down. Well above a Sentinel's 1 s
 * ping period: after a switch it re-makes its link to the new primary at most once a second, and
 * at 500 ms it counted the just-promoted primary down after most switches (every switch of
 * test/harness/sentinel.test.ts) and could fail over again, promoting the old primary back,
 * restarted empty.
 */
export const DOWN_AFTER_MS = 2_000
const FAILOVER_TIMEOUT_MS = 2_000

/** Worker slots that get a Redis user of their own (`workerUser`) on the data nodes. */
const WORKER_SLOTS = 32
/** The Redis user worker slot `slot` authenticates as on the data nodes (failover mode); its password is its name. */
export const workerUser = (slot: number): string => `w${slot}`
/** redis-cli options of the harness's own user, which no partition turns off. */
export const HARNESS_AUTH = ['--user', 'harness', '--pass', 'harness', '--no-auth-warning']
/** Config lines (as arguments) of those users: every command, key and channel. */
const USER_ARGS = [
  ...Array.from({ length: WORKER_SLOTS }, (_, slot) => ['--user', workerUser(slot), 'on', `>${workerUser(slot)}`, '~*', '&*', '+@all']).flat(),
  ...['--user', 'harness', 'on', '>harness', '~*', '&*', '+@all'],
]

export interface SentinelGroup {
  /** The data nodes (the first is the primary at start); which one is the primary changes with each failover (see `primary()`). */
  readonly nodes: readonly RedisProcess[]
  /** Where clients find the Sentinels. */
  readonly sentinels: readonly { host: string; port: number }[]
  readonly name: string
  /** The data nodes' server clock, one for all (same order as `nodes`), when started under libfaketime; else empty. */
  readonly clocks: readonly ServerClock[]
  /** The node the Sentinels name as the primary now (a majority of the live Sentinels agree). */
  primary(): Promise<RedisProcess>
  /** A node other than the primary (the first, with two replicas). */
  replica(): Promise<RedisProcess>
  /** Every node other than the primary. */
  replicas(): Promise<RedisProcess[]>
  /** Until the Sentinels name a primary other than `old` (a promotion happened); returns it. */
  waitForPromotion(old: RedisProcess, timeoutMs?: number): Promise<RedisProcess>
  /** Until every Sentinel counts replica `node` down (`s_down`): a failover then does not choose it. */
  waitForReplicaDown(node: RedisProcess, timeoutMs?: number): Promise<void>
  /**
   * Until `node` replicates from the current primary with its link up. While it is told to follow
   * no primary or another one, it is told REPLICAOF the current primary again (once a second).
   */
  waitForReplica(node: RedisProcess, timeoutMs?: number): Promise<void>
  /** What the Sentinels logged of roles and failovers so far (`+switch-master`, `+sdown`, ...), each line after its Sentinel's port. */
  events(): string[]
  /** kill -9 of everything, temporary directories removed. */
  stop(): Promise<void>
}

interface SentinelProcess {
  port: number
  child: ChildProcess
}

const sentinelLog = (dir: string, port: number) => path.join(dir, `sentinel-${port}.log`)

/** The last `count` lines of `text` that match `pattern`. */
function lastLines(text: string, pattern: RegExp, count: number): string[] {
  return text
    .split('\n')
    .filter((line) => pattern.test(line))
    .slice(-count)
}

/** The `+event`/`-event` lines (roles and failovers) of each Sentinel's log, after its port; a log not there yet has none. */
function sentinelEvents(dir: string, sentinels: readonly SentinelProcess[]): string[] {
  return sentinels.flatMap((s) => {
    let text = ''
    try {
      text = readFileSync(sentinelLog(dir, s.port), 'utf8')
    } catch {}
    return text
      .split('\n')
      .filter((line) => / [+-][a-z]/.test(line))
      .map((line) => `${s.port} ${line}`)
  })
}

async function startSentinel(dir: string, primary: RedisProcess): Promise<SentinelProcess> {
  const port = await freePort()
  const conf = path.join(dir, `sentinel-${port}.conf`)
  writeFileSync(
    conf,
    [
      `port ${port}`,
      `bind ${HOST}`,
      `dir ${dir}`,
      `logfile ${sentinelLog(dir, port)}`,
      `sentinel monitor ${SENTINEL_MASTER} ${primary.host} ${primary.port} 2`,
      `sentinel down-after-milliseconds ${SENTINEL_MASTER} ${DOWN_AFTER_MS}`,
      `sentinel failover-timeout ${SENTINEL_MASTER} ${FAILOVER_TIMEOUT_MS}`,
      `sentinel parallel-syncs ${SENTINEL_MASTER} 1`,
      '',
    ].join('\n'),
  )
  const child = spawn(defaultServer(), [conf, '--sentinel'], { stdio: 'ignore' })
  // A crashed test or run must not leave Sentinels behind: the servers' exit hook kills them too.
  trackChild(child, dir)
  child.unref()
  for (let i = 0; i < 100 && !(await pingRaw(port)); i++) await sleep(50)
  if (!(await pingRaw(port))) {
    child.kill('SIGKILL')
    throw new Error(`the Sentinel on port ${port} did not answer within 5 s`)
  }
  return { port, child }
}

/** `SENTINEL get-master-addr-by-name` of one Sentinel, through a data node's redis-cli (any port works). */
async function askSentinel(via: RedisProcess, port: number): Promise<number | undefined> {
  const reply = await via.cli('-p', String(port), 'SENTINEL', 'get-master-addr-by-name', SENTINEL_MASTER).catch(() => '')
  const lines = reply.split('\n').map((s) => s.trim())
  const n = Number(lines[1])
  return Number.isInteger(n) && n > 0 ? n : undefined
}

/** The flags one Sentinel reports for the replica on `port` (`SENTINEL replicas`: field/value lines per replica). */
async function replicaFlags(via: RedisProcess, sentinelPort: number, port: number): Promise<string | undefined> {
  const reply = await via.cli('-p', String(sentinelPort), 'SENTINEL', 'replicas', SENTINEL_MASTER).catch(() => '')
  const lines = reply.split('\n').map((s) => s.trim())
  let current: string | undefined
  for (let i = 0; i + 1 < lines.length; i++) {
    if (lines[i] === 'port') current = lines[i + 1]
    if (lines[i] === 'flags' && current === String(port)) return lines[i + 1]
  }
  return undefined
}

async function linkedTo(node: RedisProcess, primaryPort: number): Promise<boolean> {
  return linked(await node.cli('INFO', 'replication').catch(() => ''), primaryPort)
}

/** An INFO replication reply of a replica of `primaryPort` with its link up. */
function linked(info: string, primaryPort: number): boolean {
  return info.includes('role:slave') && info.includes(`master_port:${primaryPort}`) && info.includes('master_link_status:up')
}

/**
 * A primary and its replicas (`replicas`, default 1; linked), then three Sentinels that agree on the
 * primary. With `clocked` (libfaketime and a libc-malloc build, see harness/faketime.ts) the data
 * nodes run under one server clock; the Sentinels keep the real clock. `args`: more options for
 * every data node (kept through its restarts).
 */
export async function startSentinelGroup(
  opts: { clocked?: { library: string; server: string }; replicas?: 1 | 2; args?: string[] } = {},
): Promise<SentinelGroup> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-sentinel-'))
  // One clock for both data nodes (as one NTP step moves every machine of a site): Redis 7 replicates
  // an expiry as an absolute time (SET ... PXAT), so a replica whose clock differs from its primary's
  // would keep or drop every replicated key early or late by the difference (see docs/evidence/safety.md).
  const clock = opts.clocked ? serverClock() : undefined
  const count = 1 + (opts.replicas ?? 1)
  const clocks = clock ? Array.from({ length: count }, () => clock) : []
  const underClock = opts.clocked && clock ? { server: opts.clocked.server, env: faketimeEnv(opts.clocked.library, clock.file) } : {}
  // No 5 s pause before a full sync: a node that rejoins as a replica must be linked soon.
  const more = opts.args ?? []
  const a = await startRedis({ args: ['--repl-diskless-sync-delay', '0', ...USER_ARGS, ...more], ...underClock })
  const nodes = [a]
  for (let i = 1; i < count; i++)
    nodes.push(await startRedis({ args: ['--repl-diskless-sync-delay', '0', ...USER_ARGS, ...more, '--replicaof', a.host, String(a.port)], ...underClock }))
  const replicasAtStart = nodes.slice(1)
  const sentinels: SentinelProcess[] = []
  const stop = async () => {
    for (const s of sentinels) s.child.kill('SIGKILL')
    await Promise.all(nodes.map((n) => n.kill9()))
    clock?.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    for (const b of replicasAtStart) for (let i = 0; i < 200 && !(await linkedTo(b, a.port)); i++) await sleep(50)
    for (let i = 0; i < 3; i++) sentinels.push(await startSentinel(dir, a))
  } catch (err) {
    await stop()
    throw err
  }
  const byPort = (port: number | undefined) => nodes.find((n) => n.port === port)
  const primary = async (): Promise<RedisProcess> => {
    const votes = await Promise.all(sentinels.map((s) => askSentinel(a, s.port)))
    const counts = new Map<number, number>()
    for (const v of votes) if (v !== undefined) counts.set(v, (counts.get(v) ?? 0) + 1)
    const best = [...counts].sort((x, y) => y[1] - x[1])[0]
    const node = byPort(best?.[0])
    if (!node) throw new Error(`the Sentinels name no known primary (${votes.join(', ')})`)
    return node
  }
  const group: SentinelGroup = {
    nodes,
    sentinels: sentinels.map((s) => ({ host: HOST, port: s.port })),
    name: SENTINEL_MASTER,
    clocks,
    primary,
    replica: async () => {
      const p = await primary()
      return nodes.find((n) => n !== p)!
    },
    replicas: async () => {
      const p = await primary()
      return nodes.filter((n) => n !== p)
    },
    async waitForPromotion(old, timeoutMs = 15_000) {
      const deadline = performance.now() + timeoutMs
      while (performance.now() < deadline) {
        const now = await primary().catch(() => old)
        if (now !== old) return now
        await sleep(50)
      }
      throw new Error(`the Sentinels promoted no replica within ${timeoutMs} ms`)
    },
    async waitForReplicaDown(node, timeoutMs = 10_000) {
      const deadline = performance.now() + timeoutMs
      while (performance.now() < deadline) {
        const flags = await Promise.all(sentinels.map((s) => replicaFlags(a, s.port, node.port)))
        if (flags.every((f) => f?.includes('s_down'))) return
        await sleep(50)
      }
      throw new Error(`the Sentinels did not all count the replica on port ${node.port} down within ${timeoutMs} ms`)
    },
    async waitForReplica(node, timeoutMs = 15_000) {
      const deadline = performance.now() + timeoutMs
      let told = 0
      let seen = ''
      while (performance.now() < deadline) {
        const p = await primary().catch(() => undefined)
        if (p && p !== node) {
          seen = await node.cli('INFO', 'replication').catch((err: unknown) => String(err))
          if (linked(seen, p.port)) return
          // Not (or no longer) told to follow this primary: a REPLICAOF sent while the node was still
          // starting, or one Sentinel overrode, is lost. Tell it again, as Sentinel would, sooner.
          if (!seen.includes(`master_port:${p.port}`) && performance.now() - told > 1_000) {
            told = performance.now()
            await node.cli('REPLICAOF', p.host, String(p.port)).catch(() => '')
          }
        }
        await sleep(50)
      }
      const state = seen
        .split('\n')
        .filter((line) => /^(role|master_port|master_link_status|master_sync_in_progress|master_link_down_since_seconds):/.test(line.trim()))
      // Who changed its role is in its own log ("MASTER MODE enabled (user request from ...)") and the Sentinels'.
      const roles = lastLines(
        node.log(),
        /MASTER MODE|REPLICAOF|SLAVE OF|Connecting to MASTER|MASTER <-> REPLICA sync: (Finished|Master accepted)|Error condition/,
        15,
      )
      throw new Error(
        `the node on port ${node.port} did not rejoin as a replica within ${timeoutMs} ms (${state.map((l) => l.trim()).join(', ') || 'no INFO'}); ` +
          `its log:\n${roles.join('\n')}\nthe Sentinels' last events:\n${sentinels.flatMap((x) => sentinelEvents(dir, [x]).slice(-15)).join('\n')}`,
      )
    },
    events: () => sentinelEvents(dir, sentinels),
    stop,
  }
  // All three must know every replica before a failover can pick it.
  for (let i = 0; i < 200; i++) {
    const known = await Promise.all(sentinels.map((s) => a.cli('-p', String(s.port), 'SENTINEL', 'replicas', SENTINEL_MASTER).catch(() => '')))
    if (known.every((k) => replicasAtStart.every((b) => k.includes(String(b.port))))) break
    await sleep(50)
  }
  return group
}
