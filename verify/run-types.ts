// What a run is given and what it leaves: its options, the bank's final rows, the probes, and
// the events it recorded.
import type { ClockRun } from './clock-faults.js'
import type { Primitive, SqlGuard } from './config.js'
import type { HistoryEvent } from './history.js'
import type { PlannedFault } from './nemesis.js'
import type { PgTarget } from './pg-target.js'

export interface RunOptions {
  /** 'fenced' or 'control' */
  label: string
  /**
   * Default 'mutex': the bank under one lock per bank. 'semaphore': units of work under permits of
   * one semaphore. 'multi': transfers under `acquireAll` of both accounts, one lock per account
   * (`resources` accounts, `accountsPerResource` ignored). 'election': candidates that lead in
   * turn and write to one row with their term (`resources` ignored).
   */
  primitive?: Primitive
  /**
   * Semaphore mode: the limit the checker holds the run to, the limit the workers ask for (one more
   * in the broken-limit control), whether they check their permit before each unit of work, and
   * how much work a permit covers.
   */
  semaphore?: { limit: number; workerLimit: number; checks: boolean; units: [number, number]; unitMs: [number, number] }
  /** Election mode: how many rounds of guarded writes a leader does before it resigns. */
  election?: { rounds: [number, number] }
  fencing: boolean
  /** Server clock faults: the nodes run under libfaketime, and the plan gets a clock fault (verify/clock-faults.ts). */
  clock?: ClockRun
  /** Failover mode: a primary, a replica and three Sentinels instead of `nodes` nodes behind proxies. */
  failover?: boolean
  /** Failover mode: how many replicas the primary has (default 1). */
  replicaNodes?: 1 | 2
  /** Failover mode: the workers' `replicas` option (the control run leaves it out, or with two replicas asks for one acknowledgement). */
  replicas?: { count: number; timeout: number }
  guard: SqlGuard
  seed: number
  quorum: boolean
  nodes: number
  workers: number
  resources: number
  accountsPerResource: number
  initialBalance: number
  ttl: number
  warmupMs: number
  chaosMs: number
  /** Quiet time after the last fault heals, for the liveness check. */
  recoverMs: number
  hold: [number, number]
  historyPath: string
  pg: PgTarget
  /** Called about once a second with a one-line status. */
  progress: (line: string) => void
}

export interface AccountRow {
  id: number
  balance: number
  fence: number
}

export interface LedgerRow {
  seq: number
  account: number
  fence: number
  worker: string
}

export interface ProbeResult {
  resource: string
  ok: boolean
  waited: number
  error?: string
}

export interface FinalState {
  initialTotal: number
  accounts: AccountRow[]
  ledger: LedgerRow[]
  /** After every worker was killed with -9: how long a fresh client waited for each resource. */
  probes: ProbeResult[]
  /** History time at which the last fault healed and the recovery phase began. */
  healedAt: number
  chaosStart: number
  end: number
}

export interface RunResult {
  options: RunOptions
  plan: PlannedFault[]
  events: HistoryEvent[]
  final: FinalState
  workerErrors: string[]
}
