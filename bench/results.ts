// One run of `npm run bench` as bench/results/*.json keeps it, and the shapes the report makes of
// it: tables and targets.
import type { RevocationRow } from './revocation.js'
import type { HandoffFloor, KeyspaceRow, MemoryRedisRow, RenewRow, RingFloor } from './cost.js'
import type { ContendRow } from './contend-analysis.js'
import type { MemoryRow } from './heap-memory.js'
import type { IdleRow } from './idle.js'
import type { FloorRow, LatencyRow, ThroughputRow } from './latency.js'
import type { QuorumResult } from './quorum.js'
import type { SemaphoreRow } from './semaphore-analysis.js'
import type { WorkRow } from './semaphore-work.js'
import type { RwRow, TransferRow } from './transfer.js'

export interface Machine {
  nproc: number
  cpu: string
  node: string
  redis: string
  date: string
  mode: 'full' | 'quick'
  scenarios: string
  seconds?: number
}

export interface Results {
  machine: Machine
  floor?: FloorRow
  A?: LatencyRow[]
  B?: ThroughputRow[]
  /** B with 100 keys per worker and tryAcquire. */
  B100?: ThroughputRow[]
  /** B at scale: 1,000 workers on 100,000 keys (fencelock and the seed). */
  Bscale?: ThroughputRow[]
  C?: ContendRow[]
  D?: IdleRow[]
  E?: ContendRow[]
  F?: MemoryRow[]
  /** Handoff floor: pub/sub wake-up plus one round trip between two processes. */
  H?: HandoffFloor
  /** The handoff floor with 2 and 8 processes alive, each hop waking the next (as C's and E's handoffs do). */
  Hring?: RingFloor[]
  /** Uncontended cost over 10, 1,000 and 100,000 resources. */
  K?: KeyspaceRow[]
  /** Renewals at scale: one process holding many auto-extended leases. */
  L?: RenewRow[]
  /** Redis memory per resource locked once. */
  M?: MemoryRedisRow[]
  /** Semaphores: limit 4, 16 processes. */
  S?: SemaphoreRow[]
  /** Semaphores at work: limit 4, 16 processes, each permit held around 1, 10 or 100 ms of simulated work. */
  Swork?: WorkRow[]
  /** Transfers: 8 processes, 16 accounts, two locked at once. */
  T?: TransferRow[]
  /** Read-heavy: 90% reads, read/write lock against a mutex. */
  R?: RwRow[]
  /** Revocation latency: the operator's revoke() to the holder's signal aborting. */
  V?: RevocationRow[]
  quorum?: QuorumResult
  notRun: { lib: string; reason: string }[]
  /** Scenarios that failed (the run went on without them). */
  errors: { scenario: string; message: string }[]
  targets?: Target[]
}

export interface Target {
  id: string
  target: string
  measured: string
  pass: boolean | null
}

export interface Table {
  title: string
  head: string[]
  rows: string[][]
  note?: string
}
