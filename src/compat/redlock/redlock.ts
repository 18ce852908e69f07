import { EventEmitter } from 'node:events'
import { InvalidArgumentError, LockTimeoutError, QuorumError } from '../../errors/errors.js'
import { redlock as redlockPrimitive } from '../../primitives/redlock/redlock.js'
import { adapterFor } from '../../redis/index.js'
import { Operations } from '../../runtime/operations.js'
import { Runtime } from '../../runtime/runtime.js'
import type { AcquireStats } from '../../runtime/waiter.js'
import type { Lease } from '../../runtime/lease.js'
import type { Backend, LockInfo } from '../../topology/backend.js'
import type { Primitive } from '../../topology/primitive.js'
import { quorumNodeTimeout } from '../../topology/quorum/options.js'
import { quorum } from '../../topology/quorum/quorum.js'
import { single } from '../../topology/single.js'
import { checkResource, describeValue } from '../../util/validate.js'
import { ExecutionError, LockError, ResourceLockedError, attemptsOf, type ExecutionResult, type ExecutionStats } from './errors.js'
import { Lock } from './lock.js'
import { checkSettings, epochNow, waitBudget, type Checked, type Settings } from './settings.js'
import { usingLock, type RedlockAbortSignal, type RedlockUsingContext } from './using.js'
import { applicationBluebird, nodeify, type Callback } from './callback.js'

export type { Settings } from './settings.js'
export type { RedlockAbortSignal, RedlockUsingContext } from './using.js'

/**
 * The longest lock: node-redlock takes any ttl (its own tests lock for MAX_SAFE_INTEGER / 10 ms
 * as "until released"), and so does the drop-in, up to what Redis' PX and a double keep exact.
 */
const LONGEST_LOCK = Number.MAX_SAFE_INTEGER

const QUORUM_FAILED = 'The operation was unable to achieve a quorum during its retry window.'
const DURATION = 'Duration must be an integer value in milliseconds.'

/** How the lease of one or several resources is named for the runtime (the primitive reads it back). */
const nameOf = (resources: readonly string[]): string => (resources.length > 1 ? JSON.stringify(resources) : resources[0]!)

function checkResources(value: unknown): string[] {
  const list = Array.isArray(value) ? (value as unknown[]) : [value]
  if (list.length === 0) throw new InvalidArgumentError('Expected `resources` to hold at least one resource name, got []')
  return list.map((r) => checkResource(r))
}

/**
 * node-redlock's `Redlock` (v4.2.0 and v5.0.0-beta.2, and @sesamecare-oss/redlock 1.4.0) on
 * fencelock: the same methods, events, errors and Redis layout (the resource's name holds the
 * lock's value), so node-redlock processes and the drop-in exclude each other. One client: one
 * Redis (or a cluster); several: fencelock's quorum over independent masters. Waiting is fair
 * and event-driven among drop-in processes, every lock has a `fence` and a loss `signal`.
 */
export class Redlock extends EventEmitter {
  static Lock = Lock
  static LockError = LockError
  static ExecutionError = ExecutionError
  static ResourceLockedError = ResourceLockedError
  /** v4 `servers`: the clients, in order. */
  readonly servers: unknown[]
  /** v5 `clients`. */
  readonly clients: Set<unknown>
  readonly settings: Checked
  readonly driftFactor: number
  readonly retryCount: number
  readonly retryDelay: number
  readonly retryJitter: number
  readonly #runtime: Runtime
  readonly #topology: (primitive: Primitive<unknown, LockInfo>) => Backend<LockInfo>
  readonly #one: Operations<LockInfo>
  #all: Operations<LockInfo> | undefined

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
    this.#runtime = new Runtime({
      ttl: 10_000,
      wait: waitBudget(this.settings),
      driftFactor: this.settings.driftFactor,
      waiterGrace: 500,
      allowShortTtl: true,
      tryTimeout: 2_000,
      maxHold: Infinity,
    })
    const adapters = this.servers.map((c, i) => adapterFor(c, this.servers.length > 1 ? `clients[${i}]` : 'client'))
    const nodeTimeout = quorumNodeTimeout(undefined)
    this.#topology =
      adapters.length === 1
        ? (primitive) => single(adapters[0]!, primitive, LONGEST_LOCK)
        : (primitive) => quorum(adapters, primitive, { maxTtl: LONGEST_LOCK, nodeTimeout, restartWindow: 0 })
    this.#one = new Operations(this.#runtime, this.#topology(this.#primitive(false)), 'mutex')
  }

  #primitive(several: boolean): Primitive<unknown, LockInfo> {
    const s = this.settings
    return redlockPrimitive({ fenceRetention: 86_400_000, waiterGrace: 500, db: s.db, recheck: Math.max(10, s.retryDelay) }, several)
  }

  #ops(resources: readonly string[]): Operations<LockInfo> {
    if (resources.length === 1) return this.#one
    this.#all ??= new Operations(this.#runtime, this.#topology(this.#primitive(true)), 'multi', '', (name) => name as string)
    return this.#all
  }

  /** v4: locks `resource` (a name or an array of names) for `ttl` ms. */
  lock(resource: string | string[], ttl: number, callback?: Callback<Lock>): Promise<Lock> {
    return nodeify(this.#lockV4(resource, ttl, {}), callback)
  }

  /** v4: `lock` with settings of its own for this call. */
  lockWithOptions(resource: string | string[], ttl: number, options: Settings, callback?: Callback<Lock>): Promise<Lock> {
    return nodeify(this.#lockV4(resource, ttl, options), callback)
  }

  acquireWithOptions(resource: string | string[], ttl: number, options: Settings, callback?: Callback<Lock>): Promise<Lock> {
    return this.lockWithOptions(resource, ttl, options, callback)
  }

  /** v4's internal entry, which its own tests call: `value` null locks, a value extends the lock that holds it. */
  _lock(resource: string | string[], value: string | null, ttl: number, options?: Settings | Callback<Lock>, callback?: Callback<Lock>): Promise<Lock> {
    const [settings, cb] = typeof options === 'function' ? [{}, options] : [options ?? {}, callback]
    if (value === null) return nodeify(this.#lockV4(resource, ttl, settings), cb)
    return this.extend(new Lock(this, resource, value, epochNow() + ttl, 0, 0), ttl, cb)
  }

  /** v5: locks every resource of `resources` for `duration` ms, all or nothing; v4 (a name, or a callback): `lock`. */
  acquire(resources: string | string[], duration: number, settingsOrCallback?: Partial<Settings> | Callback<Lock>): Promise<Lock> {
    if (typeof settingsOrCallback === 'function' || !Array.isArray(resources)) return this.lock(resources, duration, settingsOrCallback as Callback<Lock>)
    return this.#acquireV5(resources, duration, settingsOrCallback)
  }

  async #acquireV5(resources: string[], duration: number, settings: Partial<Settings> | undefined): Promise<Lock> {
    if (Math.floor(duration) !== duration) throw new Error(DURATION)
    const s = checkSettings(settings, this.settings)
    const stats: AcquireStats = { attempts: 0, contended: false }
    try {
      const lease = await this.#take(resources, duration, s, stats)
      return Lock.of(this, resources, lease, 'v5', this.#attempts(stats.attempts, true))
    } catch (error) {
      if (error instanceof InvalidArgumentError) throw error
      throw new ExecutionError(QUORUM_FAILED, this.#attempts(this.#failedAttempts(error, stats.attempts, s), false, resources.length, error), { cause: error })
    }
  }

  async #lockV4(resource: string | string[], ttl: number, options: Settings): Promise<Lock> {
    const s = checkSettings(options, this.settings)
    const stats: AcquireStats = { attempts: 0, contended: false }
    try {
      const lease = await this.#take(Array.isArray(resource) ? resource : [resource], ttl, s, stats)
      return Lock.of(this, resource, lease, 'v4', stats.attempts, s.retryCount - stats.attempts)
    } catch (error) {
      if (error instanceof InvalidArgumentError) throw error
      const attempts = this.#failedAttempts(error, stats.attempts, s)
      throw new LockError(`Exceeded ${s.retryCount} attempts to lock the resource "${String(resource)}".`, attempts, { cause: error })
    }
  }

  /** The lease of `resources` (one, or several all or nothing), waiting at most the settings' budget; counts the attempts into `stats`. */
  async #take(resources: string[], ttl: number, s: Checked, stats: AcquireStats): Promise<Lease> {
    const names = checkResources(resources)
    try {
      return await this.#ops(names).acquireCounting(nameOf(names), { ttl, wait: waitBudget(s) }, stats)
    } catch (error) {
      this.#clientErrors(error)
      throw error
    }
  }

  /**
   * v5's `attempts`: one promise of the votes per attempt (the last one won when `won`). A vote
   * against carries what the client said (`failure`'s first cause that is not fencelock's), or
   * `ResourceLockedError` where another lock held the resources.
   */
  #attempts(count: number, won: boolean, resources = 1, failure?: unknown): Promise<ExecutionStats>[] {
    const n = this.servers.length
    const against = (i: number): Error =>
      clientCause(failure, i) ?? new ResourceLockedError(`The operation was applied to: 0 of the ${resources} requested resources.`)
    return attemptsOf(count, () => ({ membershipSize: n, quorumSize: Math.floor(n / 2) + 1, votesFor: new Set(), votesAgainst: new Map() })).map((p, a) =>
      p.then((stats) => {
        this.servers.forEach((client, i) => {
          if (won && a === count - 1) stats.votesFor.add(client)
          else stats.votesAgainst.set(client, against(i))
        })
        return stats
      }),
    )
  }

  /** Attempts a failed acquisition reports: as many as node-redlock's retries would have made in the budget that ran out. */
  #failedAttempts(error: unknown, sent: number, s: Checked): number {
    return error instanceof InvalidArgumentError || s.retryCount === -1 ? sent : s.retryCount + 1
  }

  /** What the clients said went wrong, as node-redlock's events tell it: `clientError` (v4) and `error` (v5). */
  #clientErrors(error: unknown): void {
    const causes = error instanceof QuorumError ? error.votes.flatMap((v) => (v.outcome === 'error' && v.cause ? [v.cause] : [])) : []
    if (!(error instanceof QuorumError) && error instanceof Error && error.name === 'RedisError') causes.push(error.cause ?? error)
    for (const cause of causes) {
      this.emit('clientError', cause)
      this.emit('error', cause)
    }
  }

  /** Releases on the resource and value the lock names now (node-redlock reads them at call time). */
  async #release(lock: Lock): Promise<boolean> {
    lock.expiration = 0
    const names = checkResources(lock.resource)
    try {
      return await this.#ops(names).release(nameOf(names), lock.value)
    } catch (error) {
      this.#clientErrors(error)
      throw error
    }
  }

  /** v4: releases the lock; rejects with `LockError` if it was not held on a majority. */
  unlock(lock: Lock, callback?: Callback<void>): Promise<void> {
    const unlocking = this.#release(lock).then(
      (released) => {
        if (!released) throw new LockError(`Unable to fully release the lock on resource "${String(lock.resource)}".`)
      },
      (error: unknown) => {
        throw new LockError(`Unable to fully release the lock on resource "${String(lock.resource)}".`, 0, { cause: error })
      },
    )
    return nodeify(unlocking, callback)
  }

  /** v5: releases the lock; rejects with `ExecutionError` if it was not held on a majority. v4 locks: `unlock`. */
  release(lock: Lock, settingsOrCallback?: Partial<Settings> | Callback<void>): Promise<ExecutionResult | undefined> {
    if (Lock.flavorOf(lock) === 'v4' || typeof settingsOrCallback === 'function')
      return this.unlock(lock, settingsOrCallback as Callback<void>).then(() => undefined)
    const start = epochNow()
    return this.#release(lock).then(
      (released) => {
        if (!released) throw new ExecutionError(QUORUM_FAILED, this.#attempts(1, false, lock.resources.length))
        return { attempts: this.#attempts(1, true), start }
      },
      (error: unknown) => {
        throw new ExecutionError(QUORUM_FAILED, this.#attempts(1, false, lock.resources.length), { cause: error })
      },
    )
  }

  /** v4: extends `lock` in place to `ttl` ms from now; v5: resolves with a new Lock (the old one expires at once). */
  extend(lock: Lock, ttl: number, callbackOrSettings?: unknown): Promise<Lock> {
    if (Lock.flavorOf(lock) === 'v4' || typeof callbackOrSettings === 'function')
      return nodeify(this.#extendV4(lock, ttl), callbackOrSettings as Callback<Lock>)
    return this.#extendV5(lock, ttl)
  }

  async #extend(lock: Lock, ttl: number): Promise<boolean> {
    const names = checkResources(lock.resource)
    try {
      return await this.#ops(names).extend(nameOf(names), lock.value, ttl)
    } catch (error) {
      this.#clientErrors(error)
      throw error
    }
  }

  async #extendV4(lock: Lock, ttl: number): Promise<Lock> {
    if (lock.expiration < epochNow()) throw new LockError(`Cannot extend lock on resource "${String(lock.resource)}" because the lock has already expired.`, 0)
    const failed = (cause?: unknown) =>
      new LockError(`Exceeded ${this.retryCount} attempts to lock the resource "${String(lock.resource)}".`, 1, cause === undefined ? undefined : { cause })
    const extended = await this.#extend(lock, ttl).catch((error: unknown) => {
      throw failed(error)
    })
    if (!extended) throw failed()
    lock.expiration = epochNow() + (Lock.leaseOf(lock)?.remaining ?? ttl - Math.round(this.driftFactor * ttl) - 2)
    lock.attempts = 1
    return lock
  }

  async #extendV5(lock: Lock, duration: number): Promise<Lock> {
    if (Math.floor(duration) !== duration) throw new Error(DURATION)
    if (lock.expiration < epochNow()) throw new ExecutionError('Cannot extend an already-expired lock.', [])
    const extended = await this.#extend(lock, duration).catch((error: unknown) => {
      throw new ExecutionError(QUORUM_FAILED, this.#attempts(1, false, lock.resources.length), { cause: error })
    })
    if (!extended) throw new ExecutionError(QUORUM_FAILED, this.#attempts(1, false, lock.resources.length))
    lock.expiration = 0
    const lease = Lock.leaseOf(lock)
    return lease
      ? Lock.of(this, lock.resources, lease, 'v5', this.#attempts(1, true))
      : new Lock(this, lock.resources, lock.value, this.#attempts(1, true), epochNow() + duration)
  }

  /**
   * v4: a bluebird disposer (for bluebird's `Promise.using`) that releases the lock after the
   * block; `errorHandler` hears a failed release. Needs the application's `bluebird`.
   */
  disposer(resource: string | string[], ttl: number, errorHandler: (err: Error) => void = () => {}): unknown {
    const Bluebird = applicationBluebird() as { resolve(value: unknown): { disposer(fn: (lock: Lock) => unknown): unknown } } | null
    if (!Bluebird)
      throw new InvalidArgumentError(
        `redlock.disposer() needs the package bluebird (for its Promise.using), which could not be loaded from ${describeValue(process.cwd())}`,
      )
    return Bluebird.resolve(this.#lockV4(resource, ttl, {})).disposer((lock: Lock) => lock.unlock().catch(errorHandler))
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
    if (Math.floor(duration) !== duration) return Promise.reject(new Error(DURATION))
    const settings = typeof settingsOrRoutine === 'function' ? undefined : settingsOrRoutine
    const routine = optionalRoutine ?? settingsOrRoutine
    if (typeof routine !== 'function') return Promise.reject(new Error('INVARIANT: routine is not a function.'))
    const s = checkSettings(settings, this.settings)
    if (s.automaticExtensionThreshold > duration - 100)
      return Promise.reject(new Error('A lock `duration` must be at least 100ms greater than the `automaticExtensionThreshold` setting.'))
    return usingLock(this.#acquireV5(resources, duration, settings), duration, s.automaticExtensionThreshold, routine)
  }

  /** Quits every client (node-redlock's `quit`). */
  quit(callback?: Callback<unknown[]>): Promise<unknown[]> {
    // v4 resolves with the clients' replies (v5 with nothing: no one reads it).
    const quitting = this.#runtime.close().then(() => Promise.all(this.servers.map(quitClient)))
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

/**
 * Why client `i` voted against, as node-redlock tells it: the client's own error (a quorum's vote
 * for that node, or the innermost cause), fencelock's error where there is none (a closed client),
 * or undefined where the lock was simply held (the budget ran out: `ResourceLockedError`).
 */
function clientCause(failure: unknown, i: number): Error | undefined {
  if (failure === undefined || failure instanceof LockTimeoutError) return undefined
  if (failure instanceof QuorumError) {
    const cause = failure.votes.find((v) => v.node === i)?.cause
    return cause instanceof Error ? cause : undefined
  }
  let error = failure
  while (error instanceof Error && error.cause instanceof Error) error = error.cause
  return error instanceof Error ? error : undefined
}
