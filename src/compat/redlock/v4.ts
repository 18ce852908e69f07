import { InvalidArgumentError } from '../../errors/errors.js'
import type { AcquireStats } from '../../runtime/waiter.js'
import { describeValue } from '../../util/validate.js'
import { applicationBluebird } from './callback.js'
import type { RedlockCore } from './core.js'
import { LockError } from './errors.js'
import { Lock } from './lock.js'
import { checkSettings, checkTtlV4, epochNow, type Settings } from './settings.js'

// node-redlock v4's API on the core: locks that count their attempts, `LockError`, bluebird's disposer.

/** v4: locks `resource` (a name or an array of names) for `ttl` ms, with `options` over the instance's settings. */
export async function lockV4(core: RedlockCore, resource: string | string[], ttl: number, options: Settings): Promise<Lock> {
  checkTtlV4(ttl)
  const s = checkSettings(options, core.owner.settings)
  const stats: AcquireStats = { attempts: 0, contended: false, wakes: [] }
  try {
    const lease = await core.take(Array.isArray(resource) ? resource : [resource], ttl, s, stats)
    // v4 keeps the resources as an array, whichever it was given (its `_lock` wraps a name).
    return Lock.of(core.owner, Array.isArray(resource) ? resource : [resource], lease, 'v4', stats.attempts, s.retryCount - stats.attempts)
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw error
    const attempts = core.failedAttempts(error, stats.attempts, s)
    throw new LockError(`Exceeded ${s.retryCount} attempts to lock the resource "${String(resource)}".`, attempts, { cause: error })
  }
}

/** v4: releases the lock; rejects with `LockError` if it was not held on a majority. */
export function unlockV4(core: RedlockCore, lock: Lock): Promise<void> {
  return core.release(lock).then(
    (released) => {
      if (!released) throw new LockError(`Unable to fully release the lock on resource "${String(lock.resource)}".`)
    },
    (error: unknown) => {
      throw new LockError(`Unable to fully release the lock on resource "${String(lock.resource)}".`, 0, { cause: error })
    },
  )
}

/** v4: extends `lock` in place to `ttl` ms from now. */
export async function extendV4(core: RedlockCore, lock: Lock, ttl: number): Promise<Lock> {
  checkTtlV4(ttl)
  if (lock.expiration < epochNow()) throw new LockError(`Cannot extend lock on resource "${String(lock.resource)}" because the lock has already expired.`, 0)
  const failed = (cause?: unknown) =>
    new LockError(`Exceeded ${core.owner.retryCount} attempts to lock the resource "${String(lock.resource)}".`, 1, cause === undefined ? undefined : { cause })
  const extended = await core.extend(lock, ttl).catch((error: unknown) => {
    throw failed(error)
  })
  if (!extended) throw failed()
  lock.expiration = Math.floor(epochNow() + (Lock.leaseOf(lock)?.remaining ?? ttl - Math.round(core.owner.driftFactor * ttl) - 2))
  lock.attempts = 1
  return lock
}

/**
 * v4: a bluebird disposer (for bluebird's `Promise.using`) that releases the lock after the
 * block; `errorHandler` hears a failed release. Needs the application's `bluebird`.
 */
export function disposerV4(core: RedlockCore, resource: string | string[], ttl: number, errorHandler: (err: Error) => void): unknown {
  const Bluebird = applicationBluebird() as { resolve(value: unknown): { disposer(fn: (lock: Lock) => unknown): unknown } } | null
  if (!Bluebird)
    throw new InvalidArgumentError(
      `redlock.disposer() needs the package bluebird (for its Promise.using), which could not be loaded from ${describeValue(process.cwd())}`,
    )
  return Bluebird.resolve(lockV4(core, resource, ttl, {})).disposer((lock: Lock) => lock.unlock().catch(errorHandler))
}
