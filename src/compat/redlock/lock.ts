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

/**
 * A held lock, shaped as node-redlock's `Lock` (v4's `resource`, `unlock`; v5's `resources`,
 * `release`), plus what fencelock adds: `fence`, strictly larger than the fence of every earlier
 * lock of the resource taken through the drop-in, and `signal`, aborted when the lock is lost.
 * `attempts`: attempts sent (v4: a number; v5: one promise of the votes per attempt).
 */
export class Lock {
  readonly redlock: LockOwner
  resource: string | string[]
  readonly resources: string[]
  value: string
  expiration: number
  attempts: number | readonly Promise<ExecutionStats>[]
  attemptsRemaining: number
  /** @internal The lease behind it; the lock's methods act on it. */
  readonly lease: Lease
  /** @internal */
  readonly flavor: Flavor

  constructor(
    owner: LockOwner,
    resource: string | string[],
    lease: Lease,
    flavor: Flavor,
    attempts: number | readonly Promise<ExecutionStats>[],
    remaining = 0,
  ) {
    this.redlock = owner
    this.resource = resource
    this.resources = Array.isArray(resource) ? resource : [resource]
    this.value = lease.token
    this.expiration = Date.now() + lease.remaining
    this.lease = lease
    this.flavor = flavor
    this.attempts = attempts
    this.attemptsRemaining = remaining
  }

  /** The fencing token: pass it to the store the lock protects (see fencelock's `fencedSet`). */
  get fence(): number {
    return this.lease.fence
  }

  /** Aborts with `LockLostError` when the lock is lost (expired, taken over, extension refused). */
  get signal(): AbortSignal {
    return this.lease.signal
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
