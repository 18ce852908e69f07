import { LockAbortedError, LockLostError, LockTimeoutError, type LockLostReason } from '../errors/errors.js'
import type { Lease } from './lease.js'
import { emit, events, type AcquireEvent, type LockKind, type WakeReason } from '../util/telemetry.js'

type Writable<T> = { -readonly [K in keyof T]: T[K] }

/** What the `fencelock:acquire` event reports of one acquire; kept only while someone listens. */
export interface AcquireStats {
  /** Attempts sent to Redis so far. */
  attempts: number
  /** The first attempt found the lock taken (or someone ahead in line), or this acquire queued behind another of this process. */
  contended: boolean
  /** Why each attempt after waiting was sent (see `WakeReason`). */
  readonly wakes: WakeReason[]
}

// What the runtime publishes on the diagnostics channels (util/telemetry.ts): an acquisition
// (`fencelock:acquire:start`, `fencelock:acquire`), and a lease's extension, release and loss.

const asked = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined)

/**
 * Runs one acquisition (`acquire`, `tryAcquire`) and publishes `fencelock:acquire:start` and
 * `fencelock:acquire` for it when anyone listens: the outcome ('acquired', 'busy' for a null
 * lease, 'timeout', 'aborted', 'error'), the wait, the attempts sent and whether the first found
 * the lock taken. The caller asks only while someone listens (no stats object or closures otherwise).
 */
export function reportAcquire<L extends Lease | null>(
  kind: LockKind,
  resource: string,
  ttl: unknown,
  wait: unknown,
  run: (stats: AcquireStats | undefined) => Promise<L>,
): Promise<L> {
  const started = performance.now()
  const startedAt = performance.timeOrigin + started
  const stats: AcquireStats = { attempts: 0, contended: false, wakes: [] }
  /** What the end of the call reports whatever its outcome; the caller adds the lease's token and fence, or the error. */
  const ended = (outcome: AcquireEvent['outcome'], waitedMs: number): Writable<AcquireEvent> => ({
    kind,
    resource,
    outcome,
    waitedMs,
    startedAt,
    attempts: stats.attempts,
    contended: stats.contended,
    wakes: stats.wakes,
  })
  // The options as given, before they are checked: a value that is not a number is left out (the call rejects).
  emit(events.acquireStart, () => ({ kind, resource, ttl: asked(ttl), wait: asked(wait) }))
  return run(stats).then(
    (lease) => {
      const waitedMs = performance.now() - started
      emit(events.acquire, () => {
        const message = ended(lease ? 'acquired' : 'busy', waitedMs)
        if (lease) {
          message.token = lease.token
          message.fence = lease.fence
        }
        return message
      })
      return lease
    },
    (error: unknown) => {
      const outcome = error instanceof LockTimeoutError ? 'timeout' : error instanceof LockAbortedError ? 'aborted' : 'error'
      emit(events.acquire, () => {
        const message = ended(outcome, performance.now() - started)
        message.error = error
        return message
      })
      throw error
    },
  )
}

/** The lease as its telemetry events name it. */
interface Reported {
  readonly resource: string
  readonly token: string
  readonly fence: number
}

/** `fencelock:extend` once `extending` settles, if anyone listens (the messages are built only then). */
export function reportExtend(kind: LockKind, lease: Reported, ttl: number, extending: Promise<boolean>): void {
  if (!events.extend.hasSubscribers) return
  const { resource, token } = lease
  extending.then(
    (ok) => emit(events.extend, () => ({ kind, resource, token, ttl, outcome: ok ? 'extended' : 'lost' })),
    (error: unknown) =>
      emit(events.extend, () =>
        error instanceof LockLostError ? { kind, resource, token, ttl, outcome: 'lost' } : { kind, resource, token, ttl, outcome: 'error', error },
      ),
  )
}

/** `fencelock:release`, if anyone listens: Redis answered `released`; `wasHeld`: the lease was still held when released. */
export function reportRelease(kind: LockKind, lease: Reported, acquiredAt: number, wasHeld: boolean, released: boolean): void {
  if (!events.release.hasSubscribers) return // every release passes here: no closure for nobody
  emit(events.release, () => ({
    kind,
    resource: lease.resource,
    token: lease.token,
    fence: lease.fence,
    released: released && wasHeld,
    heldMs: performance.now() - acquiredAt,
    acquiredAt: performance.timeOrigin + acquiredAt,
  }))
}

/** `fencelock:lost`. */
export function reportLost(kind: LockKind, lease: Reported, acquiredAt: number, reason: LockLostReason): void {
  emit(events.lost, () => ({
    kind,
    resource: lease.resource,
    token: lease.token,
    fence: lease.fence,
    reason,
    heldMs: performance.now() - acquiredAt,
    acquiredAt: performance.timeOrigin + acquiredAt,
  }))
}

/** `fencelock:at-risk`: an extension of the still-held lease failed with `error`; `remainingMs` of validity left. */
export function reportAtRisk(kind: LockKind, lease: Reported, remainingMs: number, error: unknown): void {
  emit(events.atRisk, () => ({ kind, resource: lease.resource, token: lease.token, fence: lease.fence, remainingMs, error }))
}
