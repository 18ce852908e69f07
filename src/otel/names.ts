// The names fencelock/otel records under: exported so that views, dashboards and tests can refer
// to them instead of copying strings.

/** Instrumentation scope: the tracer's and the meter's name. */
export const SCOPE = 'fencelock'

/** Span names. */
export const SPANS = {
  /** From the call to `acquire` until it settled (acquired, timed out, aborted, failed). */
  wait: 'fencelock.wait',
  /** From the acquisition until the lease was released or lost. */
  hold: 'fencelock.hold',
} as const

/** Metric names (OpenTelemetry style; a Prometheus exporter turns `.` into `_` and adds units and `_total`). */
export const METRICS = {
  /** Histogram, s: time spent in `acquire`, whatever its outcome. */
  waitDuration: 'fencelock.wait.duration',
  /** Histogram, s: time a lease was held, until release or loss. */
  holdDuration: 'fencelock.hold.duration',
  /** Counter, {acquire}: settled `acquire` calls. */
  acquires: 'fencelock.acquires',
  /** Counter, {lease}: leases lost (expired, refused, unreachable, closed). */
  lost: 'fencelock.lost',
  /** Counter, {acquire}: `acquire` calls that had to wait for another holder, or timed out. */
  contention: 'fencelock.contention',
  /** Counter, {write}: fenced writes (`fencedSet`, `claimFence`), accepted or refused. */
  fencedWrites: 'fencelock.fenced_writes',
} as const

/** Attribute keys, on spans and metrics. */
export const ATTRIBUTES = {
  /** The resource name. Always on spans; on metrics only with `includeResourceInMetrics`. */
  resource: 'fencelock.resource',
  /** The primitive: `mutex`, `semaphore`, `multi`, read/write kinds. */
  kind: 'fencelock.kind',
  /** `acquired`, `timeout`, `aborted`, `error`, `busy` (acquire); `released`, `lost` (hold duration). */
  outcome: 'fencelock.outcome',
  /** The lease's fencing token. Spans only. */
  fence: 'fencelock.fence',
  /** Attempts the acquire made, when the library reports it. Spans only. */
  attempts: 'fencelock.attempts',
  /** Whether the acquire found the lock held, when the library reports it. Spans only. */
  contended: 'fencelock.contended',
  /** `true` on a hold span ended by a release. */
  released: 'fencelock.released',
  /** Why a lease was lost: `expired`, `refused`, `unreachable`, `closed`. */
  lostReason: 'fencelock.lost.reason',
  /** Whether the resource accepted a fenced write. */
  accepted: 'fencelock.fenced_write.accepted',
  /** `fencedSet` or `claimFence`. */
  operation: 'fencelock.fenced_write.operation',
  /** Semantic-convention attribute: the error's class name, on failed acquires. Spans only. */
  errorType: 'error.type',
} as const
