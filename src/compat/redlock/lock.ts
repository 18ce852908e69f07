import { epochNow } from './settings.js'
import type { Lease } from '../../runtime/lease.js'
import type { ExecutionResult, ExecutionStats } from './errors.js'

/** Which node-redlock API made a lock: its methods answer as that version's do. */
export type Flavor = 'v4' | 'v5'

/** What a `Lock` asks of the `Redlock` that made it. */
export interface LockOwner {
  unlock(lock: Lock, callback?: (err: Error | null) => void): Promise<void>
  release(lock: Lock): Promise<ExecutionResult | undefined>
  extend(lock: Lock, ttl: number, callbackOrSettings?: unknown): Promise<Lock>
}

/** The lease behind each lock the drop-in handed out (a lock made with `new Lock(...)` has none). */
const leases = new WeakMap<object, { lease: Lease; flavor: Flavor }>()

/** The lease behind `lock`, or behind the lock it was made from (`Object.create(lock)`). */
function leaseBehind(lock: object): Lease | undefined {
  for (let l: object | null = lock; l !== null && l !== Object.prototype; l = Object.getPrototypeOf(l)) {
    const found = leases.get(l)
    if (found) return found.lease
  }
  return undefined
}

// The class body does not name the class: a class that names itself inside is bundled as
// `var Lock = class _Lock`, and prints (and reports its `name`) as `_Lock`.

/**
 * A held lock, shaped as node-redlock's `Lock` (v4's `resource`, `unlock`; v5's `resources`,
 * `release`), plus what fencelock adds: `fence`, strictly larger than the fence of every earlier
 * lock of the resource taken through the drop-in, and `signal`, aborted when the lock is lost.
 * `attempts`: attempts sent (v4: a number; v5: one promise of the votes per attempt).
 *
 * `new Lock(...)` takes node-redlock's own arguments, v5's `(redlock, resources, value, attempts,
 * expiration)` or v4's `(redlock, resource, value, expiration, attempts, attemptsRemaining)`, for
 * code that releases or extends a lock by a value it kept: such a lock has no `fence`, and its
 * `signal` never aborts (nothing watches it).
 */
export class Lock {
  /** The `Redlock` that made the lock: `unlock`, `release` and `extend` go through it. */
  readonly redlock: LockOwner
  /** The resource as it was given: one name (v4) or a list of names (v5, and v4's multi-resource locks). */
  resource: string | string[]
  /** The resources the lock holds, always a list. */
  readonly resources: string[]
  /** The lock's random value (its owner token): only the holder of this value can release or extend it. */
  value: string
  /**
   * When the lock expires, in ms since the epoch by the local wall clock, less the clock drift
   * allowance, rounded down: never later than the lease's own deadline (which the monotonic clock
   * keeps). For display and for node-redlock code that compares it with the wall clock's now.
   */
  expiration: number
  /** Attempts sent to take the lock: a number (v4), or one promise of the votes per attempt (v5). */
  attempts: number | readonly Promise<ExecutionStats>[]
  /** v4: how many retries were left when the lock was taken (0 for v5). */
  attemptsRemaining: number
  /** v5: the settings the lock was taken with (undefined for v4). */
  readonly settings: unknown

  constructor(redlock: LockOwner, resource: string | string[], value: string, ...rest: unknown[]) {
    this.redlock = redlock
    this.resource = resource
    this.resources = Array.isArray(resource) ? resource : [resource]
    this.value = value
    const v5 = Array.isArray(rest[0])
    this.attempts = (v5 ? rest[0] : rest[1]) as Lock['attempts']
    this.expiration = Number(v5 ? rest[1] : rest[0])
    this.attemptsRemaining = v5 ? 0 : Number(rest[2] ?? 0)
    this.settings = v5 ? rest[2] : undefined
  }

  /** @internal A lock backed by `lease`. */
  static of(owner: LockOwner, resource: string | string[], lease: Lease, flavor: Flavor, attempts: Lock['attempts'], remaining = 0): Lock {
    // Whole ms, as node-redlock's (the wall clock plus ttl less drift), rounded down: never later than the lease.
    const expiration = Math.floor(epochNow() + lease.remaining)
    const lock =
      flavor === 'v5' ? new this(owner, resource, lease.token, attempts, expiration) : new this(owner, resource, lease.token, expiration, attempts, remaining)
    leases.set(lock, { lease, flavor })
    return lock
  }

  /** @internal The lease behind the lock, if the drop-in handed it out (or the one it was made from, for `Object.create(lock)`). */
  static leaseOf(lock: Lock): Lease | undefined {
    return leaseBehind(lock)
  }

  /** @internal v4 (a number of attempts) or v5 (a list). */
  static flavorOf(lock: Lock): Flavor {
    return Array.isArray(lock.attempts) ? 'v5' : 'v4'
  }

  /** The fencing token (absent on a lock made with `new Lock`): pass it to the store the lock protects (see fencelock's `fencedSet`). */
  get fence(): number | undefined {
    return leaseBehind(this)?.fence
  }

  /** Aborts with `LockLostError` when the lock is lost (expired, taken over, extension refused). */
  get signal(): AbortSignal {
    return leaseBehind(this)?.signal ?? new AbortController().signal
  }

  /** v4: releases (callback or promise). */
  unlock(callback?: (err: Error | null) => void): Promise<void> {
    return this.redlock.unlock(this, callback)
  }

  /** v5: releases; resolves with the attempts. */
  release(): Promise<ExecutionResult | undefined> {
    return this.redlock.release(this)
  }

  /** v4: extends this lock (callback or promise); v5: resolves with a new Lock. */
  extend(ttl: number, callback?: (err: Error | null, lock?: Lock) => void): Promise<Lock> {
    return this.redlock.extend(this, ttl, callback)
  }
}
