import { EventEmitter } from 'node:events'
import { InvalidArgumentError } from '../../errors/errors.js'
import { describeValue } from '../../util/validate.js'
import { RedlockCore } from './core.js'
import { ExecutionError, LockError, ResourceLockedError, type ExecutionResult } from './errors.js'
import { Lock } from './lock.js'
import { checkSettings, epochNow, type Checked, type Settings } from './settings.js'
import type { RedlockAbortSignal, RedlockUsingContext } from './using.js'
import { nodeify, type Callback } from './callback.js'
import { disposerV4, extendV4, lockV4, unlockV4 } from './v4.js'
import { acquireV5, extendV5, releaseV5, usingV5 } from './v5.js'

export type { Settings } from './settings.js'
export type { RedlockAbortSignal, RedlockUsingContext } from './using.js'

/**
 * node-redlock's `Redlock` (v4.2.0 and v5.0.0-beta.2, and @sesamecare-oss/redlock 1.4.0) on
 * fencelock: the same methods, events, errors and Redis layout (the resource's name holds the
 * lock's value), so node-redlock processes and the drop-in exclude each other. One client: one
 * Redis (or a cluster); several: fencelock's quorum over independent masters. Waiting is fair
 * and event-driven among drop-in processes, every lock has a `fence` and a loss `signal`.
 */
export class Redlock extends EventEmitter {
  /** The {@link Lock} class, as node-redlock v4 hangs it on `Redlock` (`Redlock.Lock`). */
  static Lock = Lock
  /** The {@link LockError} class (`Redlock.LockError`), for `instanceof` in v4 code. */
  static LockError = LockError
  /** The {@link ExecutionError} class (`Redlock.ExecutionError`). */
  static ExecutionError = ExecutionError
  /** The {@link ResourceLockedError} class (`Redlock.ResourceLockedError`). */
  static ResourceLockedError = ResourceLockedError
  /** v4 `servers`: the clients, in order. */
  readonly servers: unknown[]
  /** v5 `clients`. */
  readonly clients: Set<unknown>
  /** The settings the instance was made with, every one filled in with its default ({@link Settings}). */
  readonly settings: Checked
  /** v4: `settings.driftFactor`, the clock drift allowed as a share of the ttl. */
  readonly driftFactor: number
  /** v4: `settings.retryCount`, the retries after the first attempt (-1: without end). */
  readonly retryCount: number
  /** v4: `settings.retryDelay`, the ms between attempts. */
  readonly retryDelay: number
  /** v4: `settings.retryJitter`, the random ms added to or taken from each delay. */
  readonly retryJitter: number
  readonly #core: RedlockCore

  constructor(clients: Iterable<unknown>, settings: Settings = {}) {
    super()
    // v5 emits 'error' for every client error; without a listener that would throw.
    this.on('error', () => {})
    this.servers = clients != null && typeof (clients as Iterable<unknown>)[Symbol.iterator] === 'function' ? [...clients] : []
    this.clients = new Set(this.servers)
    if (this.clients.size === 0) throw new Error('Redlock must be instantiated with at least one redis client.')
    this.settings = checkSettings(settings)
    for (const custom of ['lockScript', 'unlockScript', 'extendScript'])
      if ((settings as Record<string, unknown>)[custom] !== undefined)
        throw new InvalidArgumentError(
          `Expected no \`${custom}\` option: fencelock/redlock runs its own scripts (node-redlock's layout, with fences and a fair queue beside it), so a custom script would be ignored; got ${describeValue((settings as Record<string, unknown>)[custom])}`,
        )
    ;({ driftFactor: this.driftFactor, retryCount: this.retryCount, retryDelay: this.retryDelay, retryJitter: this.retryJitter } = this.settings)
    this.#core = new RedlockCore(this)
  }

  /** v4: locks `resource` (a name or an array of names) for `ttl` ms. */
  lock(resource: string | string[], ttl: number, callback?: Callback<Lock>): Promise<Lock> {
    return nodeify(lockV4(this.#core, resource, ttl, {}), callback)
  }

  /** v4: `lock` with settings of its own for this call. */
  lockWithOptions(resource: string | string[], ttl: number, options: Settings, callback?: Callback<Lock>): Promise<Lock> {
    return nodeify(lockV4(this.#core, resource, ttl, options), callback)
  }

  /** v4: another name of {@link Redlock.lockWithOptions}. */
  acquireWithOptions(resource: string | string[], ttl: number, options: Settings, callback?: Callback<Lock>): Promise<Lock> {
    return this.lockWithOptions(resource, ttl, options, callback)
  }

  /** v4's internal entry, which its own tests call: `value` null locks, a value extends the lock that holds it. */
  _lock(resource: string | string[], value: string | null, ttl: number, options?: Settings | Callback<Lock>, callback?: Callback<Lock>): Promise<Lock> {
    const [settings, cb] = typeof options === 'function' ? [{}, options] : [options ?? {}, callback]
    if (value === null) return nodeify(lockV4(this.#core, resource, ttl, settings), cb)
    return this.extend(new Lock(this, resource, value, epochNow() + ttl, 0, 0), ttl, cb)
  }

  /** v5: locks every resource of `resources` for `duration` ms, all or nothing; v4 (a name, or a callback): `lock`. */
  acquire(resources: string | string[], duration: number, settingsOrCallback?: Partial<Settings> | Callback<Lock>): Promise<Lock> {
    if (typeof settingsOrCallback === 'function' || !Array.isArray(resources)) return this.lock(resources, duration, settingsOrCallback as Callback<Lock>)
    return acquireV5(this.#core, resources, duration, settingsOrCallback)
  }

  /** v4: releases the lock; rejects with `LockError` if it was not held on a majority. */
  unlock(lock: Lock, callback?: Callback<void>): Promise<void> {
    return nodeify(unlockV4(this.#core, lock), callback)
  }

  /** v5: releases the lock; rejects with `ExecutionError` if it was not held on a majority. v4 locks: `unlock`. */
  release(lock: Lock, settingsOrCallback?: Partial<Settings> | Callback<void>): Promise<ExecutionResult | undefined> {
    if (Lock.flavorOf(lock) === 'v4' || typeof settingsOrCallback === 'function')
      return this.unlock(lock, settingsOrCallback as Callback<void>).then(() => undefined)
    return releaseV5(this.#core, lock)
  }

  /** v4: extends `lock` in place to `ttl` ms from now; v5: resolves with a new Lock (the old one expires at once). */
  extend(lock: Lock, ttl: number, callbackOrSettings?: unknown): Promise<Lock> {
    if (Lock.flavorOf(lock) === 'v4' || typeof callbackOrSettings === 'function')
      return nodeify(extendV4(this.#core, lock, ttl), callbackOrSettings as Callback<Lock>)
    return extendV5(this.#core, lock, ttl)
  }

  /**
   * v4: a bluebird disposer (for bluebird's `Promise.using`) that releases the lock after the
   * block; `errorHandler` hears a failed release. Needs the application's `bluebird`.
   */
  disposer(resource: string | string[], ttl: number, errorHandler: (err: Error) => void = () => {}): unknown {
    return disposerV4(this.#core, resource, ttl, errorHandler)
  }

  /**
   * v5: acquires, runs `routine(signal, context)` with the lock extended whenever less than
   * `automaticExtensionThreshold` ms are left, and releases whatever happens. `signal` aborts
   * (with `signal.error`) when an extension fails for good or the lock is lost.
   */
  using<T>(
    resources: string[],
    duration: number,
    settingsOrRoutine: Partial<Settings> | ((signal: RedlockAbortSignal, context: RedlockUsingContext) => Promise<T>) | undefined,
    optionalRoutine?: (signal: RedlockAbortSignal, context: RedlockUsingContext) => Promise<T>,
  ): Promise<T> {
    return usingV5(this.#core, resources, duration, settingsOrRoutine, optionalRoutine)
  }

  /** Quits every client (node-redlock's `quit`). */
  quit(callback?: Callback<unknown[]>): Promise<unknown[]> {
    // v4 resolves with the clients' replies (v5 with nothing: no one reads it).
    const quitting = this.#core.runtime.close().then(() => Promise.all(this.servers.map(quitClient)))
    return nodeify(quitting, callback)
  }
}

/** QUIT on a client: a promise (ioredis, node-redis 4+) or a callback (node_redis 3). */
function quitClient(client: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const done = (err?: Error | null, reply?: unknown) => (err ? reject(err) : resolve(reply))
    const sent = (client as { quit(callback: (err?: Error | null, reply?: unknown) => void): unknown }).quit(done)
    if (sent instanceof Promise) sent.then(resolve, reject)
  })
}
