// What the orchestrator tells each worker process (passed as one JSON argument).

export interface BankResource {
  /** Lock name, e.g. 'bank-0'; it guards the accounts listed here. */
  name: string
  accounts: number[]
}

export interface WorkerConfig {
  /** Worker slot; a respawned worker keeps the slot of the one it replaces. */
  slot: number
  /** How many times this slot was (re)spawned, to vary its random stream. */
  generation: number
  /** Where the worker connects: the fault proxies, one per Redis node (none in failover mode). */
  nodes: { host: string; port: number }[]
  /** Failover mode: the worker follows these Sentinels to the primary they name `name`. */
  sentinel?: {
    sentinels: { host: string; port: number }[]
    name: string
    /** The client that follows them: ioredis `new Redis({ sentinels, name })` or node-redis `createSentinel` (odd slots). */
    client: 'ioredis' | 'node-redis'
    /** The Redis user this worker authenticates as on the data nodes (its own: a partition can keep it alone). */
    username: string
  }
  /** Failover mode's guarded run: `createLocks({ replicas })`, every grant acknowledged by a replica. */
  replicas?: { count: number; timeout: number }
  quorum: boolean
  /** false = control run: unguarded SQL writes and a plain SET instead of fencedSet. */
  fencing: boolean
  /**
   * How SQL is fenced when `fencing` is on. 'claim' (default): the fence is written to both rows
   * before they are read, and every write is guarded. 'txn': the README's pattern as written, the
   * read and the guarded writes in one READ COMMITTED transaction, nothing fenced before the read.
   */
  guard: SqlGuard
  /** Passed to `new pg.Client()`. */
  pg: { connectionString?: string; connectionTimeoutMillis: number }
  schema: string
  resources: BankResource[]
  prefix: string
  ttl: number
  /**
   * Quorum mode: a node restarted (or started) less than maxTtl ago is left out of the count, so a
   * small maxTtl keeps a short run from waiting 30 s (the default) after every restart.
   */
  maxTtl: number
  /** createLocks' fenceRetention, ms; absent: the library's default (the clock control sets a short one). */
  fenceRetention?: number
  wait: number
  /** Failover mode: how long a dead waiter keeps its place (the default, ttl / 4, is a second at its 4 s ttl). */
  waiterGrace?: number
  /** Time spent between reading the balances and writing them, in ms. */
  hold: [number, number]
  seed: number
  /** Semaphore mode only (verify/semaphore-worker.ts); absent for the mutex. */
  semaphore?: SemaphoreWorkerConfig
  /** Election mode only (verify/election-worker.ts): how many rounds of guarded writes a leader does before it resigns. */
  election?: { rounds: [number, number] }
}

/** What a semaphore worker does differently. */
export interface SemaphoreWorkerConfig {
  /** The limit the worker asks for: the run's limit, or one more in the broken-limit control. */
  limit: number
  /**
   * true: before each unit of work the worker checks its permit's signal and deadline, and stops
   * working when either says the permit is lost. false (control): it works on regardless.
   */
  checks: boolean
  /** Units of work per permit, and each unit's length in ms. */
  units: [number, number]
  unitMs: [number, number]
}

/**
 * Which primitive a run exercises: 'mutex' (one lock per bank of accounts), 'semaphore' (units of
 * work under permits), 'multi' (transfers that lock both accounts with `acquireAll`, one lock per
 * account), 'election' (candidates that lead in turn and write to one row with their term).
 */
export type Primitive = 'mutex' | 'semaphore' | 'multi' | 'election'

export type SqlGuard = 'claim' | 'txn'

export const workerName = (slot: number): string => `w${slot}`
