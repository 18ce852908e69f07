// The scenarios of `npm run bench`, in the order a run measures them: the letter users type
// (`--only A,C`) and the reports print, the heading the run logs, and what each one measures.
// bench/report.ts turns the rows into the tables, the JSON, the markdown and the SVG.
import type { Config } from './bench-config.js'
import { isTuned } from './bench-config.js'
import { contendedHandoffs, E_CURVE, waitersScaleCurve } from './contention.js'
import { costOverResources, handoffFloor, handoffRing, K_SIZES, redisMemoryPerResource, RING_SIZES, renewalsAtScale } from './cost.js'
import { heapMemory } from './heap-memory.js'
import { idleWaitingCost } from './idle.js'
import { B_SHAPES, uncontendedLatency, uncontendedThroughput } from './latency.js'
import { QUORUM_MAX_TTL, type LibSpec } from './libs.js'
import type { Pool } from './pool.js'
import { quorumLatencyAndContention } from './quorum.js'
import type { Server } from './redis.js'
import type { Results } from './results.js'
import { S_LIMIT, S_PROCS, semaphoreContendedAndIdle } from './semaphore.js'
import { semaphoresAtWork } from './semaphore-work.js'
import { revocationLatency } from './revocation.js'
import { R_HOLD_MS, R_PROCS, R_READ_SHARE, readHeavyReadWriteLock, T_ACCOUNTS, T_PROCS, transfersUnderTwoLocks } from './transfer.js'

export const ALL = ['A', 'B', 'C', 'D', 'E', 'F', 'H', 'K', 'L', 'M', 'S', 'T', 'R', 'Q', 'V'] as const
export type Scenario = (typeof ALL)[number]

/** What a scenario works with: the worker pool, the main Redis server, the run's config and results. */
export interface Bench {
  pool: Pool
  main: Server
  cfg: Config
  results: Results
  /** Starts another redis-server, stopped with the others at the end of the run. */
  start: () => Promise<Server>
}

export interface ScenarioStep {
  id: Scenario
  /** Whether the run's --only selection runs it (by default: when its letter is selected). */
  runs?: (only: ReadonlySet<Scenario>) => boolean
  heading: (cfg: Config) => string
  measure: (b: Bench) => Promise<void>
}

const log = (line: string) => process.stderr.write(`${line}\n`)

/** E's peer: the best peer of C tuned to 10 ms; redis-semaphore (SET NX, 10 ms) when C did not run. */
function scalePeer(results: Results): LibSpec {
  const peers = (results.C ?? []).filter((r) => r.lib !== 'fencelock' && r.tuned && r.violations === 0)
  const best = peers.reduce<(typeof peers)[number] | undefined>((a, b) => (!a || b.handoffsPerSec > a.handoffsPerSec ? b : a), undefined)
  const spec: LibSpec = best ? { kind: best.lib, ...(best.label.includes('retry ') ? { retry: 10 } : {}) } : { kind: 'semaphore' }
  if (!isTuned(spec)) spec.retry = 10
  return spec
}

async function quorumOnThreeNodes(b: Bench): Promise<void> {
  const nodes = [await b.start(), await b.start(), await b.start()]
  // fencelock counts a quorum node only once it has been up for maxTtl (its restart rule).
  log(`  waiting ${QUORUM_MAX_TTL / 1000} s: fencelock counts a node once it has been up for maxTtl`)
  await new Promise((resolve) => setTimeout(resolve, QUORUM_MAX_TTL + 200))
  b.results.quorum = await quorumLatencyAndContention(b.pool, nodes, b.cfg)
  if (b.results.quorum.fencelock !== 'available') console.log('fencelock quorum: not available in this build')
}

export const SCENARIOS: readonly ScenarioStep[] = [
  { id: 'A', heading: () => 'A. uncontended latency', measure: async (b) => void (b.results.A = await uncontendedLatency(b.pool, b.main, b.cfg)) },
  {
    id: 'B',
    heading: () => 'B. uncontended throughput: 50 workers (one key each; 100 keys each, tryAcquire), and 1,000 workers on 100,000 keys',
    measure: async (b) => {
      b.results.B = await uncontendedThroughput(b.pool, b.main, b.cfg, B_SHAPES.one)
      b.results.B100 = await uncontendedThroughput(b.pool, b.main, b.cfg, B_SHAPES.hundred)
      b.results.Bscale = await uncontendedThroughput(b.pool, b.main, b.cfg, B_SHAPES.scale)
    },
  },
  {
    id: 'C',
    heading: (cfg) => `C. contended, 8 processes, ${cfg.contendMs / 1000} s each`,
    measure: async (b) => void (b.results.C = await contendedHandoffs(b.pool, b.main, b.cfg)),
  },
  {
    id: 'H',
    runs: (only) => only.has('H') || only.has('C'),
    heading: () => 'H. handoff floor: PUBLISH -> woken subscriber process -> one GET answered',
    measure: async (b) => {
      b.results.H = await handoffFloor(b.pool, b.main, b.cfg)
      b.results.Hring = []
      for (const procs of RING_SIZES) b.results.Hring.push(await handoffRing(b.pool, b.main, b.cfg, procs))
    },
  },
  {
    id: 'D',
    heading: (cfg) => `D. idle cost, 8 waiters, ${cfg.idleMs / 1000} s each`,
    measure: async (b) => void (b.results.D = await idleWaitingCost(b.pool, b.main, b.cfg)),
  },
  {
    id: 'E',
    heading: (cfg) => `E. scale: ${E_CURVE.map(([p, w]) => `${p} x ${w}`).join(', ')} processes x waiters on one key, ${cfg.scaleMs / 1000} s each`,
    measure: async (b) => void (b.results.E = await waitersScaleCurve(b.pool, b.main, b.cfg, scalePeer(b.results))),
  },
  { id: 'F', heading: (cfg) => `F. memory, ${cfg.memoryN} held leases / waiters`, measure: async (b) => void (b.results.F = await heapMemory(b.main, b.cfg)) },
  {
    id: 'K',
    heading: () => `K. uncontended cost over ${K_SIZES.map((n) => n.toLocaleString('en-US')).join(', ')} resources`,
    measure: async (b) => void (b.results.K = await costOverResources(b.pool, b.main, b.cfg)),
  },
  {
    id: 'L',
    heading: () => 'L. renewals at scale: one process holding many auto-extended leases',
    measure: async (b) => void (b.results.L = await renewalsAtScale(b.main, b.cfg)),
  },
  {
    id: 'M',
    heading: () => 'M. Redis memory per resource locked once',
    measure: async (b) => void (b.results.M = await redisMemoryPerResource(b.pool, b.main, b.cfg)),
  },
  {
    id: 'S',
    heading: (cfg) =>
      `S. semaphore, limit ${S_LIMIT}, ${S_PROCS} processes: at work (permits held around 1, 10, 100 ms of simulated work), then the tight loop (no work) ${cfg.contendMs / 1000} s each, then ${S_PROCS} idle waiters for ${cfg.idleMs / 1000} s`,
    measure: async (b) => {
      b.results.Swork = await semaphoresAtWork(b.pool, b.main, b.cfg)
      b.results.S = await semaphoreContendedAndIdle(b.pool, b.main, b.cfg)
    },
  },
  {
    id: 'T',
    heading: (cfg) => `T. transfers, ${T_PROCS} processes, ${T_ACCOUNTS} accounts, random pairs, ${cfg.contendMs / 1000} s each`,
    measure: async (b) => void (b.results.T = await transfersUnderTwoLocks(b.pool, b.main, b.cfg)),
  },
  {
    id: 'R',
    heading: (cfg) => `R. read-heavy, ${R_PROCS} processes, ${Math.round(R_READ_SHARE * 100)}% reads holding ${R_HOLD_MS} ms, ${cfg.contendMs / 1000} s each`,
    measure: async (b) => void (b.results.R = await readHeavyReadWriteLock(b.pool, b.main, b.cfg)),
  },
  { id: 'Q', heading: () => 'Quorum: 3 Redis nodes', measure: quorumOnThreeNodes },
  {
    id: 'V',
    heading: (cfg) => `V. revocation: ${cfg.quick ? 100 : 1_000} revocations, one at a time, on one Redis and on a quorum of 3`,
    measure: async (b) => void (b.results.V = await revocationLatency(b.main, b.start, b.cfg)),
  },
]
