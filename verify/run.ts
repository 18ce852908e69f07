// One run: Redis nodes behind fault proxies, a bank in PostgreSQL, worker processes moving money
// under the lock, the nemesis, and the final state. Everything that happens goes to the history.
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { Redis } from 'ioredis'
import { clockTools, startClockedRedis, type ClockedRedis } from '../harness/faketime.js'
import { startFaultProxy } from '../harness/fault-proxy.js'
import { startRedis, type RedisProcess } from '../harness/redis-server.js'
import { startSentinelGroup, workerUser, type SentinelGroup } from '../harness/sentinel.js'
import { applyFailover } from './apply-failover.js'
import { applyFault, type FaultTargets } from './apply-fault.js'
import { BankDb } from './bank-db.js'
import { withClockFault } from './clock-faults.js'
import type { BankResource, WorkerConfig } from './config.js'
import { HistoryWriter, monotonicNow, now as wallNow, type HistoryEvent } from './history.js'
import { Holders } from './holders.js'
import { planFaults, type PlannedFault } from './nemesis.js'
import { probe } from './probe.js'
import type { FinalState, RunOptions, RunResult } from './run-types.js'
import { WorkerSlots, type Slot } from './worker-slots.js'

export type { AccountRow, FinalState, LedgerRow, ProbeResult, RunOptions, RunResult } from './run-types.js'

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)))

export const finalStatePath = (historyPath: string): string => `${historyPath.replace(/\.jsonl$/, '')}.final.json`

/** See WorkerConfig.maxTtl: twice the ttl, so a restarted node rejoins the count 2 ttl later. */
export const quorumMaxTtl = (ttl: number): number => ttl * 2

/** A run under way: what its phases share. */
interface Run extends FaultTargets {
  options: RunOptions
  semaphore: RunOptions['semaphore']
  schema: string
  /** The bank; none in semaphore mode, whose protected work is observed in the history alone. */
  bank: BankDb | undefined
  probeClients: Redis[]
  /** The nodes under libfaketime (clock faults on): stopped, and their clock files removed, at the end. */
  clocked: ClockedRedis[]
  phaseName: string
  okOps: number
  faultsSoFar: number
  /** Failover mode: the primary, its replica and the Sentinels (redisNodes holds the two data nodes). */
  group?: SentinelGroup
}

function bankResources(options: RunOptions): BankResource[] {
  // Transfer mode: one lock per account, named as the README's transfer example names them.
  // Election mode: one election, whose leaders write to one row (a counter).
  if (options.primitive === 'election') return [{ name: 'leader', accounts: [1] }]
  return Array.from({ length: options.resources }, (_, r) =>
    options.primitive === 'multi'
      ? { name: `account:${r + 1}`, accounts: [r + 1] }
      : { name: `bank-${r}`, accounts: Array.from({ length: options.accountsPerResource }, (_, a) => r * 100 + a + 1) },
  )
}

function workerConfig(run: Run, slot: Slot): WorkerConfig {
  const { options, semaphore } = run
  return {
    slot: slot.slot,
    generation: slot.generation,
    nodes: run.proxies.map((p) => ({ host: p.host, port: p.port })),
    // Failover mode: the workers of even slots follow the Sentinels with ioredis, the odd ones with node-redis.
    ...(run.group
      ? {
          sentinel: {
            sentinels: [...run.group.sentinels],
            name: run.group.name,
            client: slot.slot % 2 ? 'node-redis' : 'ioredis',
            username: workerUser(slot.slot),
          },
        }
      : {}),
    ...(options.replicas ? { replicas: options.replicas } : {}),
    quorum: options.quorum,
    fencing: options.fencing,
    guard: options.guard,
    pg: options.pg,
    schema: run.schema,
    resources: run.resources,
    prefix: 'verify:',
    ttl: options.ttl,
    maxTtl: quorumMaxTtl(options.ttl),
    ...(options.clock?.fenceRetention ? { fenceRetention: options.clock.fenceRetention } : {}),
    // Failover mode: short waits, so that waiters ask again (a fresh attempt) soon after a promotion
    // instead of sleeping until the deadline the old primary told them.
    wait: options.failover ? 500 : options.ttl * 3,
    ...(options.failover ? { waiterGrace: 250 } : {}),
    hold: options.hold,
    seed: options.seed,
    ...(semaphore ? { semaphore: { limit: semaphore.workerLimit, checks: semaphore.checks, units: semaphore.units, unitMs: semaphore.unitMs } } : {}),
    ...(options.election ? { election: options.election } : {}),
  }
}

function newRun(options: RunOptions, semaphore: RunOptions['semaphore']): Run {
  // The mutex's history keeps its clock; the semaphore's and the election's compare processes to the millisecond.
  const now = semaphore || options.primitive === 'election' ? monotonicNow : wallNow
  const history = new HistoryWriter(options.historyPath)
  const schema = `fencelock_verify_${randomBytes(4).toString('hex')}`
  const script = semaphore
    ? 'semaphore-worker.ts'
    : options.primitive === 'multi'
      ? 'multi-worker.ts'
      : options.primitive === 'election'
        ? 'election-worker.ts'
        : 'worker.ts'
  const run: Run = {
    options,
    semaphore,
    ttl: options.ttl,
    now,
    history,
    schema,
    bank: semaphore ? undefined : new BankDb(options.pg, schema),
    resources: bankResources(options),
    holders: new Holders(semaphore !== undefined, now, options.ttl),
    workers: new WorkerSlots({ script, config: (slot) => workerConfig(run, slot), history, now, record: (event) => record(run, event) }),
    redisNodes: [],
    proxies: [],
    clocks: [],
    clocked: [],
    probeClients: [],
    phaseName: 'warmup',
    okOps: 0,
    faultsSoFar: 0,
  }
  return run
}

function record(run: Run, event: HistoryEvent): void {
  run.history.add(event)
  if (event.kind === 'op' && event.type === 'ok') run.okOps++
  run.holders.observe(event)
}

const phase = (run: Run, name: string) => run.history.add({ kind: 'meta', what: 'phase', name, time: run.now() })

/** The bank's tables, the Redis nodes behind their proxies, the workers; returns the money in the bank. */
async function setUp(run: Run): Promise<number> {
  const { options, resources } = run
  phase(run, 'setup')
  await run.bank?.create(resources, options.initialBalance)
  const initialTotal = options.initialBalance * resources.reduce((n, r) => n + r.accounts.length, 0)
  const tools = options.clock ? clockTools() : undefined
  if (tools && 'missing' in tools) throw new Error(`server clock faults need libfaketime and a libc-malloc redis-server build: ${tools.missing}`)
  if (options.failover) {
    // Under libfaketime when clock faults are on: one clock for both data nodes, the Sentinels the real one.
    run.group = await startSentinelGroup({ ...(tools ? { clocked: tools } : {}), replicas: options.replicaNodes ?? 1 })
    run.redisNodes.push(...run.group.nodes)
    run.clocks.push(...run.group.clocks)
  }
  for (let i = 0; i < (options.failover ? 0 : options.nodes); i++) {
    const clocked = tools ? await startClockedRedis(tools) : undefined
    if (clocked) {
      run.clocked.push(clocked)
      run.clocks.push(clocked.clock)
    }
    const node: RedisProcess = clocked?.redis ?? (await startRedis())
    run.redisNodes.push(node)
    run.proxies.push(await startFaultProxy({ host: node.host, port: node.port }))
  }
  run.workers.start(options.workers)
  return initialTotal
}

/** About once a second, the phase, the faults applied and the rate of successful operations. */
function startTicker(run: Run, plan: PlannedFault[]): NodeJS.Timeout {
  let lastOps = 0
  let lastTick = performance.now()
  const started = performance.now()
  const ticker = setInterval(() => {
    const t = performance.now()
    const rate = ((run.okOps - lastOps) * 1000) / Math.max(1, t - lastTick)
    lastOps = run.okOps
    lastTick = t
    run.options.progress(
      `[${run.options.label}] ${run.phaseName.padEnd(8)} ${((t - started) / 1000).toFixed(0).padStart(4)} s  ` +
        `faults ${String(run.faultsSoFar).padStart(3)}/${plan.length}  ops/s ${rate.toFixed(0).padStart(4)}  ok ops ${run.okOps}`,
    )
  }, 1_000)
  ticker.unref()
  return ticker
}

/** Until the warm-up time is over and every worker has been heard from (15 s more at most). */
async function warmUp(run: Run): Promise<void> {
  phase(run, 'warmup')
  const { history, options } = run
  const warmupEnd = performance.now() + options.warmupMs
  const seen = () => new Set(history.events.filter((e) => e.kind === 'op').map((e) => (e as { worker: string }).worker)).size
  while (performance.now() < warmupEnd || (seen() < options.workers && performance.now() < warmupEnd + 15_000)) await sleep(100)
}

/** The planned faults, each at its time; returns when the chaos phase began (history clock). */
async function chaos(run: Run, plan: PlannedFault[]): Promise<number> {
  phase(run, 'chaos')
  run.phaseName = 'chaos'
  const chaosStart = run.now()
  const chaosT0 = performance.now()
  for (const f of plan) {
    await sleep(chaosT0 + f.at - performance.now())
    run.faultsSoFar++
    if (run.group && f.kind.startsWith('failover-')) await applyFailover(run, run.group, f)
    // Failover mode: a clock fault steps the data nodes' one clock, recorded against the primary of then.
    else if (run.group && f.kind === 'clock') await applyFault(run, { ...f, index: run.group.nodes.indexOf(await run.group.primary()) })
    else await applyFault(run, f)
  }
  await sleep(chaosT0 + run.options.chaosMs - performance.now())
  return chaosStart
}

/** Every proxy healed, every paused worker resumed, then quiet time; returns when the heal happened. */
async function healAndRecover(run: Run): Promise<number> {
  for (const proxy of run.proxies) proxy.heal()
  for (const slot of run.workers.slots) if (slot.paused) slot.child?.kill('SIGCONT')
  const healedAt = run.now()
  phase(run, 'recover')
  run.phaseName = 'recover'
  await sleep(run.options.recoverMs)
  return healedAt
}

async function tearDown(run: Run, ticker: NodeJS.Timeout | undefined): Promise<void> {
  clearInterval(ticker)
  run.workers.forceKillAll()
  for (const client of run.probeClients) client.disconnect()
  await Promise.all(run.proxies.map((p) => p.close()))
  if (run.group) await run.group.stop()
  else await Promise.all(run.redisNodes.map((n) => n.stop()))
  await Promise.all(run.clocked.map((n) => n.stop()))
  await run.bank?.drop()
  run.history.flush()
}

/** The run's faults: the nemesis' plan for its schedule, with a server clock fault when asked for. */
function faultPlan(options: RunOptions) {
  const schedule = {
    seed: options.seed,
    duration: options.chaosMs,
    ttl: options.ttl,
    workers: options.workers,
    nodes: options.nodes,
    resources: options.resources,
    ...(options.failover ? { failover: true } : {}),
    ...(options.replicaNodes === 2 ? { replicaNodes: 2 as const } : {}),
  }
  return options.clock ? withClockFault(planFaults(schedule), { ...schedule, clock: options.clock }) : planFaults(schedule)
}
/** The probe's clients: one per proxy, or one that follows the Sentinels. */
const probeClients = (run: Run): Redis[] =>
  run.group
    ? [new Redis({ sentinels: [...run.group.sentinels], name: run.group.name, maxRetriesPerRequest: 2 })]
    : run.proxies.map((p) => new Redis({ host: p.host, port: p.port, maxRetriesPerRequest: 2 }))

export async function runOnce(options: RunOptions): Promise<RunResult> {
  const semaphore = options.primitive === 'semaphore' ? options.semaphore : undefined
  if (options.primitive === 'semaphore' && !semaphore) throw new Error('runOnce: semaphore mode needs options.semaphore')
  const run = newRun(options, semaphore)
  const plan = faultPlan(options)
  let ticker: NodeJS.Timeout | undefined
  try {
    const initialTotal = await setUp(run)
    ticker = startTicker(run, plan)
    await warmUp(run)
    const chaosStart = await chaos(run, plan)
    const healedAt = await healAndRecover(run)
    // Stop: kill -9 every worker; then a fresh client probes what they left behind.
    phase(run, 'stop')
    run.phaseName = 'probe'
    await run.workers.killAll()
    phase(run, 'probe')
    run.probeClients = probeClients(run)
    const probes = await probe({
      clients: run.probeClients,
      quorum: options.quorum,
      ttl: options.ttl,
      maxTtl: quorumMaxTtl(options.ttl),
      semaphore,
      election: options.primitive === 'election',
      resources: run.resources.map((r) => r.name),
      history: run.history,
      now: run.now,
    })
    const accounts = (await run.bank?.accounts()) ?? []
    const ledger = (await run.bank?.ledger()) ?? []
    phase(run, 'done')
    const final: FinalState = { initialTotal, accounts, ledger, probes, healedAt, chaosStart, end: run.now() }
    // Beside the history, so that `tsx verify/check.ts <history>` can check it again later.
    writeFileSync(
      finalStatePath(options.historyPath),
      JSON.stringify({
        ttl: options.ttl,
        fencing: options.fencing,
        ...(options.failover ? { failover: true, replicas: options.replicas ?? null, replicaNodes: options.replicaNodes ?? 1 } : {}),
        final,
        ...(semaphore
          ? { primitive: 'semaphore', semaphore, nodes: options.nodes }
          : options.primitive === 'multi' || options.primitive === 'election'
            ? { primitive: options.primitive }
            : {}),
      }),
    )
    return { options, plan, events: run.history.events, final, workerErrors: run.workers.errors }
  } finally {
    await tearDown(run, ticker)
  }
}
