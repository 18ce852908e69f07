// What a check finds: the result of the mutex (and transfer) checker and of the semaphore's, in
// one shape, so that the report and the terminal summary read either.
import type { LostEvent } from './history.js'

/** Failover mode: a second lease granted while the first was within its deadline and unreleased. */
export interface DoubleGrant {
  resource: string
  first: { worker: string; fence: number; start: number; deadline: number }
  second: { worker: string; fence: number; start: number }
}

/** One lease as its holder saw it: from the acquire's reply to its release request or its abort. */
export interface LeaseInterval {
  worker: string
  pid: number
  resource: string
  fence: number
  start: number
  end: number
  /** How the interval ended. */
  ended: 'released' | 'release-false' | 'release-late' | 'release-unknown' | 'lost' | 'killed' | 'open'
  lost?: LostEvent
  /** The holder's last write was refused as stale. */
  staleRejected: boolean
  /** The lease's own deadline (history clock), from the acquire's reply. */
  deadline: number
}

export interface Overlap {
  resource: string
  a: LeaseInterval
  b: LeaseInterval
  ms: number
}

export interface StaleAccepted {
  store: 'sql' | 'redis'
  /** Account id (sql) or resource (redis). */
  where: string
  fence: number
  /** The larger fence that had been accepted before it. */
  after: number
  time?: number
}

/** A committed write that overwrote an account from a read taken before another commit to it. */
export interface LostUpdate {
  account: number
  /** The write whose effect on `account` was overwritten. */
  lost: { worker: string; fence: number; committed: number }
  /** The write that read `account` before `lost` committed, and committed after it. */
  by: { worker: string; fence: number; read: number }
}

export interface Recovery {
  resource: string
  /** ms from the heal to the next successful acquire, or null if none came. */
  ms: number | null
}

/** A stretch of time in which a resource was not acquired although some worker was asking for it. */
export interface Stall {
  resource: string
  from: number
  to: number
  ms: number
  /** Faults active at some point in [from - ttl - 2 s, to] (a dead waiter's place lasts ttl + 2 s): what may explain it. */
  faults: string[]
}

export interface CheckResult {
  ttl: number
  fencing: boolean
  money: { initial: number; final: number; ok: boolean }
  staleAccepted: StaleAccepted[]
  lostUpdates: LostUpdate[]
  /** Mutex and transfer mode: leases whose fence was not above one of its resource granted before they asked, and fences handed out twice. */
  fenceOrder?: { regressions: number; duplicates: number }
  /** Pairs of (sql or redis) accepted writes across a restart of the Redis node holding the fenced key: not comparable. */
  redisRestartSkips: number
  overlaps: Overlap[]
  /** Failover mode: leases granted while another lease of the resource was within its deadline and unreleased. */
  doubleGrants?: DoubleGrant[]
  /** Failover mode: such pairs with a jump forward of the server clock between the grants (keys expired early: DESIGN.md 3). */
  doubleGrantsExcused?: DoubleGrant[]
  liveness: {
    bound: number
    /** After the final heal, with every worker running. */
    afterHeal: Recovery[]
    /** A fresh client after every worker was killed with -9 (locks and queue places left behind). */
    probes: { resource: string; ok: boolean; waited: number; error?: string }[]
    /** After each fault that ended with no other fault starting within `bound`. */
    afterFaults: { fault: string; id: number; worst: number | null }[]
    /** The longest stretches without an acquisition while a worker waited (informational). */
    stalls: Stall[]
    ok: boolean
  }
  signals: {
    /** Leases whose interval ended without a successful release, excluding killed holders. */
    lost: number
    aborted: number
    /** Lost leases with no abort event. */
    missing: LeaseInterval[]
    /** Of those, leases released well after their own deadline had passed: the expiry timer should have fired first. */
    missingPastDeadline: number
    /**
     * Not judged: the holder was killed, the release outcome is unknown (Redis error), or Redis
     * answered "not held" only after the lease's deadline (the key may have expired meanwhile).
     */
    unjudged: number
    ok: boolean
  }
  leases: LeaseInterval[]
  stats: {
    ops: number
    okOps: number
    transfers: number
    faults: Record<string, number>
    staleRejected: { claim: number; write: number; fset: number }
    acquireFailures: Record<string, number>
    lostByReason: Record<string, number>
    duration: number
  }
  violations: string[]
  ok: boolean
  /** Semaphore mode only (verify/semaphore-checker.ts). */
  semaphore?: SemaphoreCheck
  /** Election mode only (verify/election-checker.ts). */
  election?: ElectionCheck
}

/** A stretch of time in which more than `limit` permits counted at once. */
export interface Excess {
  from: number
  to: number
  ms: number
  /** How many counted at the worst moment of the stretch. */
  count: number
  permits: { worker: string; fence: number }[]
  /** Single node only: a permit of the stretch was granted before Redis restarted empty (and forgot it). */
  excusedBy?: string
}

/** One unit of protected work. */
export interface WorkUnit {
  worker: string
  fence: number
  start: number
  end: number
  /** Until when its permit was believed valid (deadline after extends, abort, release request, death). */
  validUntil: number
}

export interface SemaphoreCheck {
  /** The limit the run is held to. */
  limit: number
  /** Most permits believed valid at once. */
  maxBelieved: number
  /** Stretches with more than `limit` permits believed valid (judged). */
  excess: Excess[]
  /** The same, explained by an empty restart of the single Redis node (not judged; see docs/evidence/verify.md). */
  excused: Excess[]
  /** Most holders inside the protected work at once (a unit begun on a lost permit counts in full). */
  maxInside: number
  insideExcess: Excess[]
  /** Units of work begun after the permit's deadline or the abort of its signal. */
  workOnLost: WorkUnit[]
  /** Permits granted after another permit's acquire had returned, with a fence not above it. */
  fenceRegressions: { worker: string; fence: number; after: number }[]
  /** Fences handed out twice. */
  duplicateFences: number[]
  units: number
  extends: { ok: number; failed: number }
}

/** One observer's step back: a state it yielded that ranks below one it had yielded before. */
export interface ObserverRegression {
  worker: string
  pid: number
  time: number
  /** What it yielded before, and now: a term as `fence.version`, a vacancy as `vacant after fence`. */
  before: string
  now: string
}

export interface ElectionCheck {
  /** Terms granted (campaigns that returned a term), the probe's left out. */
  terms: number
  /** Accepted writes in the resource's log (commit order), and the counter they left. */
  writes: number
  counter: number
  /** Terms whose accepted writes are not contiguous in the log: another term wrote in between. */
  interleaved: number[]
  /** Terms whose accepted writes came from more than one process. */
  sharedTerms: number[]
  /** Terms granted after another one had been returned, with a fence not above it; fences handed out twice. */
  fenceRegressions: { worker: string; fence: number; after: number }[]
  duplicateFences: number[]
  /** Processes that observed, states they yielded, and each step back. */
  observers: number
  observed: number
  observerRegressions: ObserverRegression[]
  /** Resignations: how many returned true (handed over) and false (the term was already lost). */
  resigned: { ok: number; lost: number }
}
