import { LockLostError, type LockLostReason } from '../errors/errors.js'
import { emit, events, type LockKind } from '../util/telemetry.js'

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
  emit(events.release, () => ({
    kind,
    resource: lease.resource,
    token: lease.token,
    fence: lease.fence,
    released: released && wasHeld,
    heldMs: performance.now() - acquiredAt,
  }))
}

/** `fencelock:lost`. */
export function reportLost(kind: LockKind, lease: Reported, acquiredAt: number, reason: LockLostReason): void {
  emit(events.lost, () => ({ kind, resource: lease.resource, token: lease.token, fence: lease.fence, reason, heldMs: performance.now() - acquiredAt }))
}
