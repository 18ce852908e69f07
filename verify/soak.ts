// `npm run soak -- --minutes N`: every primitive on three topologies at once (a primary with a
// replica behind Sentinels, a 3-master cluster, a quorum of 3), from worker processes with ioredis
// and node-redis, for N minutes with a fault every minute; each minute checked by verify's
// checkers and sampled (memory, handles, timers, subscriber connections, Redis memory and keys).
// Passes when nothing is unsafe, no wait passed its bound and (a run of 10 minutes or more)
// nothing grew after minute 5.
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import type { FaultTargets } from './apply-fault.js'
import type { WorkerConfig } from './config.js'
import { HistoryWriter, now, type HistoryEvent, type LostEvent } from './history.js'
import { Holders } from './holders.js'
import { checkWindow, type SoakFault, type WindowCheck } from './soak-check.js'
import { renderSoakReport, type SoakResult } from './soak-report.js'
import { baseMinute, nodeSample, subscribersOf, type MinuteSample } from './soak-samples.js'
import { applySoakFault, cliOn, nodesOf, SOAK_FAULTS, startTopologies, stopTopologies, WARMUP_FAULTS, type SoakNodes } from './soak-topologies.js'
import type { SoakTopology, SoakWorkerConfig, WorkerSample } from './soak-types.js'
import { WorkerSlots } from './worker-slots.js'

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)))

const TTL = 2_000
const WAIT = 4_000
const WARMUP_MS = 5_000
/** Spacing of the warm-up's faults: twelve of them end about a minute before the base sample of minute 5. */
const WARMUP_FAULT_EVERY_MS = 20_000
/** Worker slot i: its topology and client library. */
const WORKERS: readonly [SoakTopology, 'ioredis' | 'node-redis'][] = [
  ['single', 'ioredis'],
  ['single', 'node-redis'],
  ['cluster', 'ioredis'],
  ['cluster', 'node-redis'],
  ['quorum', 'ioredis'],
  ['quorum', 'node-redis'],
]

/** A soak under way: the nodes, the workers, this minute's and last minute's events, what was found. */
interface Soak {
  minutes: number
  seed: number
  nodes: SoakNodes
  workers: WorkerSlots
  history: HistoryWriter
  /** Who holds what, per topology: a fault on one topology freezes only its own holders. */
  holders: Record<SoakTopology, Holders>
  previous: HistoryEvent[]
  current: HistoryEvent[]
  samples: MinuteSample[]
  pendingSamples: Map<string, WorkerSample>
  faults: SoakFault[]
  checks: WindowCheck[]
  ops: Map<string, number>
  workerErrors: Map<string, number>
  /** Where the samples are written, each minute (a run cut short keeps what it sampled). */
  samplesFile: string
}

function workerConfig(soak: Soak, slot: number): SoakWorkerConfig {
  const [topology, client] = WORKERS[slot]!
  const nodes = topology === 'single' ? [] : topology === 'cluster' ? [soak.nodes.cluster.nodes[0]!] : soak.nodes.quorum
  return {
    slot,
    seed: soak.seed,
    topology,
    client,
    nodes: nodes.map((n) => ({ host: n.host, port: n.port })),
    ...(topology === 'single' ? { sentinels: [...soak.nodes.group.sentinels], sentinelName: soak.nodes.group.name } : {}),
    ttl: TTL,
    wait: WAIT,
    idle: [40, 250],
  }
}

function record(soak: Soak, event: HistoryEvent | WorkerSample | { kind: 'meta'; what: 'error'; detail: string }): void {
  if (event.kind === 'sample') return void soak.pendingSamples.set(event.worker, event)
  if (event.kind === 'meta' && event.what === 'error') {
    const key = event.detail.slice(0, 120)
    return void soak.workerErrors.set(key, (soak.workerErrors.get(key) ?? 0) + 1)
  }
  soak.current.push(event as HistoryEvent)
  if (event.kind === 'lost') keepLost(soak, event)
  if (event.kind === 'op') {
    soak.holders[topologyOf(event.resource)]?.observe(event)
    if (event.f === 'acquire' && event.type === 'ok') {
      const kind = `${event.resource.replace(/[0-9]+$|-[ab]$/, '')}`
      soak.ops.set(kind, (soak.ops.get(kind) ?? 0) + 1)
    }
  }
}

/** A lost lease goes to the events file with the acquire that granted it (its wait, its deadline): what a reader needs to judge it. */
function keepLost(soak: Soak, lost: LostEvent): void {
  const granted = (e: HistoryEvent) =>
    e.kind === 'op' && e.f === 'acquire' && e.type === 'ok' && e.pid === lost.pid && e.resource === lost.resource && e.fence === lost.fence
  const grant = [...soak.previous, ...soak.current].reverse().find(granted)
  if (grant) soak.history.add(grant)
  soak.history.add(lost)
}

const topologyOf = (resource: string) => resource.slice(0, resource.indexOf(':')) as SoakTopology

/** What verify's fault code writes to and reads from: this minute's events of `topology`, its holders. */
function faultTargets(soak: Soak, topology: SoakTopology): FaultTargets {
  const history = {
    get events() {
      return soak.current.filter((e) => e.kind !== 'op' || topologyOf(e.resource) === topology)
    },
    add: (e: HistoryEvent) => soak.current.push(e),
  } as unknown as HistoryWriter
  return {
    ttl: TTL,
    now,
    history,
    resources: [{ name: `${topology}:m0`, accounts: [] }],
    holders: soak.holders[topology],
    workers: soak.workers,
    redisNodes: [...nodesOf(soak.nodes, topology)],
    proxies: [],
    clocks: [],
  }
}

async function fault(soak: Soak, id: number, kindIndex = (id - 1) % SOAK_FAULTS.length): Promise<void> {
  const { topology } = SOAK_FAULTS[kindIndex]!
  const entry: SoakFault = { topology, label: '', start: now(), end: Number.POSITIVE_INFINITY }
  soak.faults.push(entry)
  try {
    entry.label = await applySoakFault(
      soak.nodes,
      id,
      faultTargets(soak, topology),
      (what) => soak.history.add({ kind: 'meta', what: 'phase', name: `fault ${id}: ${what}`, time: now() }),
      kindIndex,
    )
  } catch (err) {
    const error = err as Error
    entry.label = `${topology} fault ${id}`
    entry.failed = `${error.message}${error.cause instanceof Error ? ` (${error.cause.message.split('\n')[0]})` : ''}`
    // At once, not only in the report: the run goes on testing less than it says.
    console.error(`soak: ${entry.label} failed: ${entry.failed}`)
  }
  entry.end = now()
}

/** The worker a connection of `topology` named `name` belongs to: `soak-w3`, or ioredis' cluster subscriber (one ioredis worker per topology). */
function workerOfConnection(topology: SoakTopology, name: string): string | undefined {
  if (name.startsWith('soak-')) return name.slice('soak-'.length)
  if (!name.startsWith('ioredis-cluster')) return undefined
  const slot = WORKERS.findIndex(([t, client]) => t === topology && client === 'ioredis')
  return slot < 0 ? undefined : `w${slot}`
}

/** Every worker's sample (SIGUSR2, up to 10 s for the answers), its subscriber connections, and each node's memory and keys. */
async function sample(soak: Soak, minute: number): Promise<MinuteSample> {
  soak.pendingSamples.clear()
  for (const slot of soak.workers.slots) slot.child?.kill('SIGUSR2')
  for (let i = 0; i < 100 && soak.pendingSamples.size < soak.workers.slots.length; i++) await sleep(100)
  const subscribers = new Map<string, number>()
  const nodes: MinuteSample['nodes'] = {}
  // Every node at once: each sample reads its keys for about two seconds.
  const each = (['single', 'cluster', 'quorum'] as const).flatMap((topology) => nodesOf(soak.nodes, topology).map((node, i) => ({ topology, node, i })))
  await Promise.all(
    each.map(async ({ topology, node, i }) => {
      const cli = (...args: string[]) => cliOn(topology, node, ...args)
      nodes[`${topology} node ${i}`] = await nodeSample(cli)
      for (const [w, n] of await subscribersOf(cli, (name) => workerOfConnection(topology, name))) subscribers.set(w, (subscribers.get(w) ?? 0) + n)
    }),
  )
  const workers: MinuteSample['workers'] = {}
  for (const [w, s] of soak.pendingSamples) workers[w] = { ...s, subscribers: subscribers.get(w) ?? 0 }
  return { minute, workers, nodes }
}

/** The minute's checks on it and the one before, then this minute becomes the one before. */
function closeMinute(soak: Soak, from: number): void {
  const events = [...soak.previous, ...soak.current]
  const check = checkWindow(events, { from, end: now(), ttl: TTL, wait: WAIT, faults: soak.faults })
  soak.checks.push(check)
  // A finding goes to the events file with the window it was found in (its resource's events), to be read again.
  const involved = check.violations.map((v) => v.slice(0, v.indexOf(': ')))
  for (const e of events) if ((e.kind === 'op' || e.kind === 'lost') && involved.some((r) => e.resource.includes(r))) soak.history.add(e)
  soak.previous = soak.current
  soak.current = []
}

/** Until every worker has been heard from (60 s at most: six processes start on a shared machine), then WARMUP_MS. */
async function warmUp(soak: Soak): Promise<void> {
  const heard = () => new Set(soak.current.flatMap((e) => (e.kind === 'op' ? [e.worker] : []))).size
  for (let i = 0; i < 600 && heard() < WORKERS.length; i++) await sleep(100)
  await sleep(WARMUP_MS)
}

async function runMinutes(soak: Soak): Promise<void> {
  const t0 = performance.now()
  soak.samples.push(await sample(soak, 0))
  let from = now()
  const pending: Promise<void>[] = []
  // A judged run (10 minutes or more) puts every fault kind, and the failover four times, before
  // its base minute: a fault every WARMUP_FAULT_EVERY_MS from the start, the last one ending well
  // before the base sample. After it, and in a short run throughout, a fault half-way through each minute.
  const warm = soak.minutes >= 10 ? WARMUP_FAULTS.length : 0
  for (let k = 0; k < warm; k++) {
    const at = t0 + 10_000 + k * WARMUP_FAULT_EVERY_MS
    const due = () => sleep(at - performance.now()).then(() => fault(soak, 1_000 + k, WARMUP_FAULTS[k]))
    pending.push(due())
  }
  for (let m = 1; m <= soak.minutes; m++) {
    await sleep(t0 + (m - 0.5) * 60_000 - performance.now())
    if (m > (warm > 0 ? baseMinute(soak.minutes) : 0)) pending.push(fault(soak, m))
    await sleep(t0 + m * 60_000 - performance.now())
    soak.samples.push(await sample(soak, m))
    writeFileSync(soak.samplesFile, JSON.stringify(soak.samples, null, 1))
    closeMinute(soak, from)
    from = now()
    console.log(progressLine(soak, m))
  }
  await Promise.all(pending)
}

const progressLine = (soak: Soak, m: number): string => {
  const check = soak.checks.at(-1)!
  const ops = [...soak.ops.values()].reduce((a, b) => a + b, 0)
  const heap = Object.values(soak.samples.at(-1)!.workers).map((w) => `${w.worker} ${(w.heapUsed / 2 ** 20).toFixed(1)}`)
  return `minute ${m}/${soak.minutes}: ${ops} leases so far, ${check.violations.length} violations, longest wait ${Math.round(check.longestWait.ms)} ms, ${check.lost.length} lost; heap MiB ${heap.join(', ')}`
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string', default: '60' },
      seed: { type: 'string', default: '1' },
      report: { type: 'string', default: '.verify/soak/report.md' },
    },
  })
  const minutes = Number(values.minutes)
  if (!Number.isInteger(minutes) || minutes < 1) throw new Error(`Expected --minutes to be a positive integer, got ${values.minutes}`)
  mkdirSync(path.dirname(path.resolve(values.report)), { recursive: true })
  const history = new HistoryWriter(`${values.report.replace(/\.md$/, '')}.events.jsonl`)
  const soak: Soak = {
    minutes,
    seed: Number(values.seed),
    nodes: await startTopologies(),
    workers: undefined as unknown as WorkerSlots,
    history,
    holders: { single: new Holders(false, now, TTL), cluster: new Holders(false, now, TTL), quorum: new Holders(false, now, TTL) },
    previous: [],
    current: [],
    samples: [],
    pendingSamples: new Map(),
    faults: [],
    checks: [],
    ops: new Map(),
    workerErrors: new Map(),
    samplesFile: `${values.report.replace(/\.md$/, '')}.samples.json`,
  }
  const started = new Date()
  try {
    soak.workers = new WorkerSlots({
      script: 'soak-worker.ts',
      config: (slot) => workerConfig(soak, slot.slot) as unknown as WorkerConfig,
      history,
      now,
      record: (e) => record(soak, e),
    })
    soak.workers.start(WORKERS.length)
    await warmUp(soak)
    await runMinutes(soak)
  } finally {
    await stop(soak)
  }
  const result: SoakResult = {
    minutes,
    started,
    samples: soak.samples,
    checks: soak.checks,
    faults: soak.faults,
    ops: soak.ops,
    workerErrors: soak.workerErrors,
    crashes: soak.workers.errors,
  }
  const { text, pass } = renderSoakReport(result)
  writeFileSync(values.report, text)
  writeFileSync(soak.samplesFile, JSON.stringify(soak.samples, null, 1))
  console.log(text)
  return pass ? 0 : 1
}

async function stop(soak: Soak): Promise<void> {
  soak.workers.stopping = true
  for (const slot of soak.workers.slots) slot.child?.kill('SIGTERM')
  await sleep(2_000)
  await soak.workers.killAll()
  soak.history.flush()
  await stopTopologies(soak.nodes)
}

process.exitCode = await main()
