// The diagnostics_channel messages fencelock/otel reads (see src/util/telemetry.ts), checked field by
// field: a subscriber must never throw into the code that published, and a message from another
// fencelock version may lack a field or carry new ones.

/** `fencelock:acquire`: an `acquire` call settled. */
export interface AcquireEvent {
  readonly kind: string
  readonly resource: string
  readonly outcome: string
  readonly waitedMs: number
  /** Newer library versions: when the call started (epoch ms, the process's monotonic clock). */
  readonly startedAt: number | undefined
  readonly fence: number | undefined
  readonly error: unknown
  /** Newer library versions: how many attempts the acquire made. */
  readonly attempts: number | undefined
  /** Newer library versions: whether the acquire found the lock held by someone else. */
  readonly contended: boolean | undefined
}

/** `fencelock:release` and `fencelock:lost`: a lease ended (`reason` for a loss). */
export interface HoldEvent {
  readonly kind: string
  readonly resource: string
  readonly token: string | undefined
  readonly fence: number | undefined
  readonly heldMs: number
  /** Newer library versions: when the lease was acquired (epoch ms, the process's monotonic clock). */
  readonly acquiredAt: number | undefined
  readonly released: boolean
  readonly reason: string | undefined
}

/** `fencelock:fenced-write`. */
export interface FencedWriteEvent {
  readonly accepted: boolean
  readonly operation: string
}

type Fields = Record<string, unknown>

const fields = (message: unknown): Fields => (typeof message === 'object' && message !== null ? (message as Fields) : {})
const text = (value: unknown, fallback = 'unknown'): string => (typeof value === 'string' ? value : fallback)
const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined)
const duration = (value: unknown): number => Math.max(0, count(value) ?? 0)

export function readAcquire(message: unknown): AcquireEvent {
  const m = fields(message)
  return {
    kind: text(m.kind),
    resource: text(m.resource, ''),
    outcome: text(m.outcome),
    waitedMs: duration(m.waitedMs),
    startedAt: count(m.startedAt),
    fence: count(m.fence),
    error: m.error,
    attempts: count(m.attempts),
    contended: typeof m.contended === 'boolean' ? m.contended : undefined,
  }
}

export function readHold(message: unknown): HoldEvent {
  const m = fields(message)
  return {
    kind: text(m.kind),
    resource: text(m.resource, ''),
    token: typeof m.token === 'string' ? m.token : undefined,
    fence: count(m.fence),
    heldMs: duration(m.heldMs),
    acquiredAt: count(m.acquiredAt),
    released: m.released === true,
    reason: typeof m.reason === 'string' ? m.reason : undefined,
  }
}

export function readFencedWrite(message: unknown): FencedWriteEvent {
  const m = fields(message)
  return { accepted: m.accepted === true, operation: text(m.operation) }
}
