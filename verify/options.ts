// The options of `npm run verify`: their defaults, the quick runs' seeds, and the command line.
import { parseArgs } from 'node:util'
import type { Primitive, SqlGuard } from './config.js'

/** The quick run's seed: its 15 s schedule has every kind of fault, two of them worker pauses. */
export const QUICK_SEED = 35

/**
 * The semaphore's quick run (`--primitive semaphore --quick`): seed 282's 8 s of faults are a worker
 * pause, a Redis kill, a pause until just past the holder's deadline, and a partition.
 */
export const SEMAPHORE_QUICK_SEED = 282
export const SEMAPHORE_QUICK_MS = 8_000

/**
 * The transfer mode's quick run (`--primitive multi --quick`): seed 29's 4.5 s of faults are two
 * pauses of a holder until just past its lease's deadline, and both runs take about 30 s.
 */
export const MULTI_QUICK_SEED = 29
export const MULTI_QUICK_MS = 4_500
/**
 * The election's quick run (`--primitive election --quick`): seed 90's 8 s of faults are a pause of
 * the leader (1.6 s), a script flush, a kill -9 of the leader, a connection reset, a Redis kill, and
 * a pause of the leader until just past its term's deadline.
 */
export const ELECTION_QUICK_SEED = 90
export const ELECTION_QUICK_MS = 8_000
/**
 * Failover mode's quick run (`--mode failover --quick`): seed 4's three failovers, the primary
 * killed -9 at 0.6 s and paused at about 11.5 s, each just after a grant its replica missed, then
 * the primary cut off with one worker (a partition), plus the clock step.
 */
export const FAILOVER_QUICK_SEED = 4
export const FAILOVER_QUICK_MS = 26_000
/**
 * Failover mode's ttl: longer than a Sentinel failover here (2 to 4 s), so that a lock the promoted
 * replica lacks is granted again while its first holder's lease is still valid.
 */
export const FAILOVER_TTL = 5_000
/**
 * With two replicas: the stale replica's failover takes longer (the Sentinels must first count the
 * acknowledging replica down, then that one rejoins before WAIT 1 passes again): 4 to 5 s here.
 */
export const STALE_TTL = 10_000
/** The default ttl of a mode. */
export const defaultTtl = (options: { failover?: boolean; replicaNodes?: 1 | 2 }): number =>
  options.replicaNodes === 2 ? STALE_TTL : options.failover ? FAILOVER_TTL : 1_000
/** Failover mode's guarded run: every grant acknowledged by the one replica within 250 ms (WAIT 1 250). */
export const FAILOVER_REPLICAS = { count: 1, timeout: 250 }
/**
 * Failover mode with two replicas (`--replica-nodes 2 --quick`): seed 7's one failover, the
 * stale replica's (a grant acknowledged by one replica, that one stopped, the other promoted).
 */
export const STALE_QUICK_SEED = 7
export const STALE_QUICK_MS = 1_000

/** The guarded run's `replicas`: every replica acknowledges each grant (WAIT 1, or WAIT 2 with two replicas). */
export const guardedReplicas = (options: { replicaNodes?: 1 | 2 }) => ({ ...FAILOVER_REPLICAS, count: options.replicaNodes ?? 1 })
/** The control run's `replicas`: none with one replica; with two, one acknowledgement (the setting WAIT alone cannot make safe). */
export const controlReplicas = (options: { replicaNodes?: 1 | 2 }) => (options.replicaNodes === 2 ? FAILOVER_REPLICAS : undefined)
/** Election mode: a leader does this many rounds of guarded writes (20-120 ms each) before it resigns, so some terms outlive the ttl and are extended. */
export const ELECTION_ROUNDS: [number, number] = [1, 12]
/** Transfer mode: how many accounts, each a lock of its own. */
export const MULTI_ACCOUNTS = 4

/** How the semaphore's control run is broken: workers that never check their permit, or one more permit than the limit. */
export type SemaphoreControl = 'expiry' | 'limit'

export interface VerifyOptions {
  seed: number
  /** Chaos phase of each run, ms. */
  chaosMs: number
  quorum: boolean
  /** --mode failover: a primary, a replica and three Sentinels; the guarded run sets `replicas`, the control run does not. */
  failover?: boolean
  /** --replica-nodes (failover mode): the primary's replicas, 1 (default) or 2; with 2 the guarded run asks WAIT for both, the control for one. */
  replicaNodes?: 1 | 2
  nodes: number
  workers: number
  ttl: number
  /** How the fenced run guards its SQL (see WorkerConfig.guard). */
  guard: SqlGuard
  control: boolean
  outDir: string
  quiet: boolean
  /** Default 'mutex' (the bank); 'multi': transfers under acquireAll, one lock per account; 'election': candidates that lead in turn. */
  primitive?: Primitive
  /** Semaphore mode: the limit (default 2). */
  limit?: number
  /** Semaphore mode: what the control run breaks (default 'expiry'). */
  controlKind?: SemaphoreControl
  /**
   * Server clock faults (`--clock`; `--quick` turns them on): the nodes run under libfaketime and
   * each run gets one clock fault (verify/clock-faults.ts). Off when libfaketime is missing (not in CI).
   */
  clock?: boolean
}

export const USAGE = `Usage: npm run verify -- [--quick] [--duration 10m] [--seed N] [--mode single|quorum|failover] [--nodes 3|5] [--replica-nodes 1|2]
                         [--workers N] [--ttl ms] [--guard claim|txn] [--no-control] [--out dir]
                         [--primitive mutex|semaphore|multi|election] [--limit N] [--control expiry|limit] [--clock]
  --quick       about a minute: 15 s of faults with fencing on, then the control run (seed 35);
                with --primitive semaphore, 8 s of faults per run (seed 282); with --primitive
                multi, 4.5 s of faults per run (seed ${MULTI_QUICK_SEED}); with --primitive election,
                ${ELECTION_QUICK_MS / 1000} s of faults per run (seed ${ELECTION_QUICK_SEED})
  --duration    length of the fault phase of each run: 90s, 10m, or ms (default 60s)
  --seed        seed of the fault schedule and the workers' choices (default: random, printed)
  --mode        single (one Redis node, default) or quorum (--nodes independent nodes, default 3);
                failover: a primary, a replica and three Sentinels that the workers follow (ioredis, node-redis);
                the primary killed -9 or paused just after a grant the replica missed, the replica
                promoted; the guarded run sets replicas (WAIT 1), the control run does not;
                ttl default ${FAILOVER_TTL} ms (--quick: ${FAILOVER_QUICK_MS / 1000} s of faults per run, seed ${FAILOVER_QUICK_SEED})
  --replica-nodes  failover mode: 2 gives the primary two replicas; each failover promotes the one that
                missed a grant the other acknowledged; the guarded run sets replicas: 2, the control
                replicas: 1; ttl default ${STALE_TTL} ms; no clock fault unless --clock (--quick: one
                failover per run, seed ${STALE_QUICK_SEED})
  --guard       claim (default): fence the rows before reading them; txn: the README's pattern,
                read and guarded writes in one transaction (shows why reads need the fence too)
  --no-control  skip the control run with fencing off
  --primitive   mutex (default): the bank under one lock per bank; semaphore: units of work under
                permits of one semaphore, checked against --limit (default 2; --workers default 4);
                multi: transfers between ${MULTI_ACCOUNTS} accounts (one lock each) that lock both accounts with
                acquireAll and claim each row with that account's fence; election: candidates
                campaign, lead (writes to one row guarded by the term), resign, and observe
  --clock       server clock faults (on with --quick): the nodes run under libfaketime; the guarded
                run's clock steps back by minutes, then jumps forward past the real clock; the
                control's steps back further than its short fence retention (must show violations)
  --control     semaphore mode: what the control run breaks. expiry (default): workers never check
                their permit's signal or deadline; limit: workers ask for limit + 1 permits`

export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim())
  if (!m) throw new Error(`--duration: expected e.g. 90s, 10m or 600000, got "${text}"`)
  const n = Number(m[1])
  return Math.round(n * ({ ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[m[2] ?? 'ms'] ?? 1))
}

function readArgs(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      duration: { type: 'string' },
      seed: { type: 'string' },
      mode: { type: 'string', default: 'single' },
      nodes: { type: 'string' },
      'replica-nodes': { type: 'string' },
      workers: { type: 'string' },
      ttl: { type: 'string' },
      guard: { type: 'string', default: 'claim' },
      'no-control': { type: 'boolean', default: false },
      out: { type: 'string', default: '.verify' },
      primitive: { type: 'string', default: 'mutex' },
      limit: { type: 'string' },
      control: { type: 'string', default: 'expiry' },
      clock: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }).values
}

type Values = ReturnType<typeof readArgs>

function int(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`--${name}: expected a non-negative integer, got "${text}"`)
  return n
}

/** --mode and --nodes: one node, or a quorum of 3 or 5. */
function topology(values: Values): { quorum: boolean; nodes: number } {
  const quorum = values.mode === 'quorum'
  if (values.mode === 'failover' && values.nodes !== undefined) throw new Error('--nodes: failover mode runs a primary and one replica')
  const nodes = int('nodes', values.nodes, quorum ? 3 : 1)
  if (quorum && nodes !== 3 && nodes !== 5) throw new Error(`--nodes: quorum mode runs 3 or 5 nodes, got ${nodes}`)
  if (!quorum && nodes !== 1) throw new Error('--nodes: single mode runs one node; use --mode quorum for more')
  return { quorum, nodes }
}

/** --primitive and the options that only some primitives take. */
function primitiveOf(values: Values): { primitive: Primitive; limit: number; controlKind: SemaphoreControl } {
  const primitives = ['mutex', 'semaphore', 'multi', 'election']
  if (!primitives.includes(values.primitive!)) throw new Error(`--primitive: expected mutex, semaphore, multi or election, got "${values.primitive}"`)
  const primitive = values.primitive as Primitive
  if ((primitive === 'multi' || primitive === 'election') && values.guard !== 'claim')
    throw new Error(`--guard: --primitive ${values.primitive} always claims the row with its fence before reading it (claim)`)
  if (values.control !== 'expiry' && values.control !== 'limit') throw new Error(`--control: expected expiry or limit, got "${values.control}"`)
  if (primitive !== 'semaphore' && values.limit !== undefined) throw new Error('--limit: only with --primitive semaphore')
  const limit = int('limit', values.limit, 2)
  if (primitive === 'semaphore' && limit < 1) throw new Error('--limit: expected at least 1')
  return { primitive, limit, controlKind: values.control }
}

/** --quick's seed and fault phase per primitive. */
const QUICK: Record<Primitive, { seed: number; ms: number }> = {
  mutex: { seed: QUICK_SEED, ms: 15_000 },
  semaphore: { seed: SEMAPHORE_QUICK_SEED, ms: SEMAPHORE_QUICK_MS },
  multi: { seed: MULTI_QUICK_SEED, ms: MULTI_QUICK_MS },
  election: { seed: ELECTION_QUICK_SEED, ms: ELECTION_QUICK_MS },
}

export function parseCli(argv: string[]): VerifyOptions {
  const values = readArgs(argv)
  if (values.help) {
    console.log(USAGE)
    process.exit(0)
  }
  if (values.mode !== 'single' && values.mode !== 'quorum' && values.mode !== 'failover')
    throw new Error(`--mode: expected single, quorum or failover, got "${values.mode}"`)
  const failover = values.mode === 'failover'
  if (failover && values.primitive !== 'mutex') throw new Error('--mode failover: runs the bank (--primitive mutex)')
  if (values.guard !== 'claim' && values.guard !== 'txn') throw new Error(`--guard: expected claim or txn, got "${values.guard}"`)
  const { quorum, nodes } = topology(values)
  const { primitive, limit, controlKind } = primitiveOf(values)
  const replicaNodes = int('replica-nodes', values['replica-nodes'], 1)
  if (replicaNodes !== 1 && replicaNodes !== 2) throw new Error(`--replica-nodes: expected 1 or 2, got ${replicaNodes}`)
  if (replicaNodes === 2 && !failover) throw new Error('--replica-nodes: only with --mode failover')
  const quick = values.quick
    ? failover
      ? replicaNodes === 2
        ? { seed: STALE_QUICK_SEED, ms: STALE_QUICK_MS }
        : { seed: FAILOVER_QUICK_SEED, ms: FAILOVER_QUICK_MS }
      : QUICK[primitive]
    : undefined
  return {
    seed: int('seed', values.seed, quick ? quick.seed : Math.floor(Math.random() * 1_000_000)),
    chaosMs: values.duration !== undefined ? parseDuration(values.duration) : quick ? quick.ms : 60_000,
    quorum,
    ...(failover ? { failover } : {}),
    ...(replicaNodes === 2 ? { replicaNodes: 2 as const } : {}),
    nodes,
    workers: int('workers', values.workers, 4),
    ttl: int('ttl', values.ttl, defaultTtl({ failover, replicaNodes: replicaNodes === 2 ? 2 : 1 })),
    guard: values.guard,
    control: !values['no-control'],
    outDir: values.out!,
    quiet: false,
    // The two-replica schedule is about WAIT: its control must fail by the failover alone, so --quick
    // leaves the clock fault (whose control steps back past the fence retention) to the other modes.
    clock: values.clock || (values.quick && replicaNodes !== 2),
    ...(primitive === 'semaphore'
      ? { primitive: 'semaphore' as const, limit, controlKind }
      : primitive === 'multi' || primitive === 'election'
        ? { primitive }
        : {}),
  }
}
