import { InvalidArgumentError } from '../../errors/errors.js'
import type { AcquireStats } from '../../runtime/waiter.js'
import { DURATION, QUORUM_FAILED, type RedlockCore } from './core.js'
import { ExecutionError, type ExecutionResult } from './errors.js'
import { Lock } from './lock.js'
import { checkSettings, epochNow, type Settings } from './settings.js'
import { usingLock, type RedlockAbortSignal, type RedlockUsingContext } from './using.js'

// node-redlock v5's API on the core: all-or-nothing locks of several resources, `ExecutionError` with the votes, `using`.

/** v5: locks every resource of `resources` for `duration` ms, all or nothing. */
export async function acquireV5(core: RedlockCore, resources: string[], duration: number, settings: Partial<Settings> | undefined): Promise<Lock> {
  if (Math.floor(duration) !== duration) throw new Error(DURATION)
  const s = checkSettings(settings, core.owner.settings)
  const stats: AcquireStats = { attempts: 0, contended: false, wakes: [] }
  try {
    const lease = await core.take(resources, duration, s, stats)
    return Lock.of(core.owner, resources, lease, 'v5', core.attempts(stats.attempts, true))
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw error
    throw new ExecutionError(QUORUM_FAILED, core.attempts(core.failedAttempts(error, stats.attempts, s), false, resources.length, error), { cause: error })
  }
}

/** v5: releases the lock; rejects with `ExecutionError` if it was not held on a majority. */
export function releaseV5(core: RedlockCore, lock: Lock): Promise<ExecutionResult> {
  const start = epochNow()
  return core.release(lock).then(
    (released) => {
      if (!released) throw new ExecutionError(QUORUM_FAILED, core.attempts(1, false, lock.resources.length))
      return { attempts: core.attempts(1, true), start }
    },
    (error: unknown) => {
      throw new ExecutionError(QUORUM_FAILED, core.attempts(1, false, lock.resources.length), { cause: error })
    },
  )
}

/** v5: resolves with a new Lock `duration` ms from now (the old one expires at once). */
export async function extendV5(core: RedlockCore, lock: Lock, duration: number): Promise<Lock> {
  if (Math.floor(duration) !== duration) throw new Error(DURATION)
  if (lock.expiration < epochNow()) throw new ExecutionError('Cannot extend an already-expired lock.', [])
  const extended = await core.extend(lock, duration).catch((error: unknown) => {
    throw new ExecutionError(QUORUM_FAILED, core.attempts(1, false, lock.resources.length), { cause: error })
  })
  if (!extended) throw new ExecutionError(QUORUM_FAILED, core.attempts(1, false, lock.resources.length))
  lock.expiration = 0
  const lease = Lock.leaseOf(lock)
  return lease
    ? Lock.of(core.owner, lock.resources, lease, 'v5', core.attempts(1, true))
    : new Lock(core.owner, lock.resources, lock.value, core.attempts(1, true), Math.floor(epochNow() + duration))
}

/**
 * v5: acquires, runs `routine(signal, context)` with the lock extended whenever less than
 * `automaticExtensionThreshold` ms are left, and releases whatever happens. `signal` aborts
 * (with `signal.error`) when an extension fails for good or the lock is lost.
 */
export function usingV5<T>(
  core: RedlockCore,
  resources: string[],
  duration: number,
  settingsOrRoutine: Partial<Settings> | ((signal: RedlockAbortSignal, context: RedlockUsingContext) => Promise<T>) | undefined,
  optionalRoutine?: (signal: RedlockAbortSignal, context: RedlockUsingContext) => Promise<T>,
): Promise<T> {
  if (Math.floor(duration) !== duration) return Promise.reject(new Error(DURATION))
  const settings = typeof settingsOrRoutine === 'function' ? undefined : settingsOrRoutine
  const routine = optionalRoutine ?? settingsOrRoutine
  if (typeof routine !== 'function') return Promise.reject(new Error('INVARIANT: routine is not a function.'))
  const s = checkSettings(settings, core.owner.settings)
  if (s.automaticExtensionThreshold > duration - 100)
    return Promise.reject(new Error('A lock `duration` must be at least 100ms greater than the `automaticExtensionThreshold` setting.'))
  return usingLock(acquireV5(core, resources, duration, settings), duration, s.automaticExtensionThreshold, routine)
}
