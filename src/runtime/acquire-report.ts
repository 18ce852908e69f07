import { LockAbortedError, LockTimeoutError } from '../errors/errors.js'
import type { Lease } from './lease.js'
import { emit, events, type LockKind } from '../util/telemetry.js'
import type { AcquireStats } from './waiter.js'

const asked = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined)

/** True while nobody listens to the acquire events. */
export const unreported = (): boolean => !events.acquire.hasSubscribers && !events.acquireStart.hasSubscribers

/**
 * Runs one acquisition (`acquire`, `tryAcquire`) and publishes `fencelock:acquire:start` and
 * `fencelock:acquire` for it when anyone listens: the outcome ('acquired', 'busy' for a null
 * lease, 'timeout', 'aborted', 'error'), the wait, the attempts sent and whether the first found
 * the lock taken. With nobody listening it only calls `run` (no stats object, no closures).
 */
export function reportAcquire<L extends Lease | null>(
  kind: LockKind,
  resource: string,
  ttl: unknown,
  wait: unknown,
  run: (stats: AcquireStats | undefined) => Promise<L>,
): Promise<L> {
  if (unreported()) return run(undefined)
  const started = performance.now()
  const stats: AcquireStats = { attempts: 0, contended: false, wakes: [] }
  // The options as given, before they are checked: a value that is not a number is left out (the call rejects).
  emit(events.acquireStart, () => ({ kind, resource, ttl: asked(ttl), wait: asked(wait) }))
  return run(stats).then(
    (lease) => {
      const waitedMs = performance.now() - started
      if (lease)
        emit(events.acquire, () => ({
          kind,
          resource,
          outcome: 'acquired',
          waitedMs,
          token: lease.token,
          fence: lease.fence,
          attempts: stats.attempts,
          contended: stats.contended,
          wakes: stats.wakes,
        }))
      else emit(events.acquire, () => ({ kind, resource, outcome: 'busy', waitedMs, attempts: stats.attempts, contended: stats.contended, wakes: stats.wakes }))
      return lease
    },
    (error: unknown) => {
      const outcome = error instanceof LockTimeoutError ? 'timeout' : error instanceof LockAbortedError ? 'aborted' : 'error'
      emit(events.acquire, () => ({
        kind,
        resource,
        outcome,
        waitedMs: performance.now() - started,
        error,
        attempts: stats.attempts,
        contended: stats.contended,
        wakes: stats.wakes,
      }))
      throw error
    },
  )
}
