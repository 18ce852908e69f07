// The lock lifecycle of redis-semaphore 5 (MIT, Alexander Mochalin; its src/Lock.ts, v5.7.0),
// kept as its users and tests know it: options and their checks, acquire / tryAcquire with
// acquireTimeout, acquireAttemptsLimit and retryInterval, a refresh every refreshInterval that
// reports a lost lock to onLockLost (by default thrown, so an unhandled rejection), release,
// stopRefresh. fencelock adds `fence` (of the current acquisition, from the Redis server) and
// `signal` (aborted with the LostLockError when the lock is lost, or when it is released).
import { randomUUID } from 'node:crypto'
import { LostLockError, TimeoutError } from './errors.js'
import type { Granted } from './stores.js'
import { delay, type Waker } from './wake.js'

/** `this` is the lock whose refresh failed. */
export type LockLostCallback = (this: Lock, err: LostLockError) => void

/** redis-semaphore's timings, in ms, each with the peer's default. */
export interface TimeoutOptions {
  /** How long the lock lives in Redis after each grant or refresh: its ttl. Default: 10000. */
  lockTimeout?: number
  /** How long `acquire` and `tryAcquire` keep trying before they give up. Default: 10000. */
  acquireTimeout?: number
  /** How many attempts `acquire` and `tryAcquire` make at most. Default: `Infinity`. */
  acquireAttemptsLimit?: number
  /** The pause between two attempts while an old (not upgraded) process holds the lock. Default: 10. */
  retryInterval?: number
  /** How often a held lock is refreshed (extended by `lockTimeout`); 0: never. Default: 80% of `lockTimeout`. */
  refreshInterval?: number
}

/**
 * What every constructor of fencelock/redis-semaphore takes: redis-semaphore 5's options, checked
 * with its messages (an empty or non-string `identifier`, `acquiredExternally` without one).
 */
export interface LockOptions extends TimeoutOptions {
  /** @deprecated Use `identifier` + `acquiredExternally: true` instead. */
  externallyAcquiredIdentifier?: string
  /** @deprecated Provide a custom `identifier` instead. */
  identifierSuffix?: string
  /** The holder's identifier (default `crypto.randomUUID()`): unique per holder. */
  identifier?: string
  /** With `identifier`: acquire() refreshes the lock someone else acquired under it. */
  acquiredExternally?: true
  /**
   * Called when a refresh fails and the lock is lost, with the `LostLockError`. Default: throws it,
   * from the refresh timer (an unhandled rejection, as in redis-semaphore); the lock's `signal`
   * aborts in any case, at the lock's deadline at the latest.
   */
  onLockLost?: LockLostCallback
}

/** redis-semaphore's defaults for {@link TimeoutOptions} (`refreshInterval`: 80% of `lockTimeout`). */
export const defaultTimeoutOptions = {
  /** The lock's ttl: 10 s. */
  lockTimeout: 10000,
  /** How long an acquire keeps trying: 10 s. */
  acquireTimeout: 10000,
  /** How many attempts an acquire makes: no limit. */
  acquireAttemptsLimit: Number.POSITIVE_INFINITY,
  /** The pause between attempts while an old process holds the lock: 10 ms. */
  retryInterval: 10,
}

function defaultOnLockLost(err: LostLockError): never {
  throw err
}

const REFRESH_INTERVAL_COEF = 0.8

interface Checked {
  identifier: string
  acquiredExternally: boolean
}

function checkIdentity({ identifier, acquiredExternally, externallyAcquiredIdentifier, identifierSuffix }: LockOptions): Checked {
  if (identifier !== undefined && (!identifier || typeof identifier !== 'string')) throw new Error('identifier must be not empty random string')
  if (acquiredExternally && !identifier) throw new Error('acquiredExternally=true meanless without custom identifier')
  if (externallyAcquiredIdentifier && (identifier || acquiredExternally)) throw new Error('Invalid usage. Use custom identifier and acquiredExternally: true')
  const uuid = identifier || externallyAcquiredIdentifier || (identifierSuffix ? `${randomUUID()}-${identifierSuffix}` : randomUUID())
  return { identifier: uuid, acquiredExternally: !!acquiredExternally || !!externallyAcquiredIdentifier }
}

export abstract class Lock {
  protected abstract _kind: string
  protected abstract _key: string
  protected _identifier: string
  protected _acquireOptions: Required<Omit<TimeoutOptions, 'refreshInterval'>> & { identifier: string }
  protected _refreshTimeInterval: number
  protected _refreshInterval?: ReturnType<typeof setInterval>
  protected _refreshing = false
  protected _acquired = false
  protected _acquiredExternally = false
  protected _onLockLost: LockLostCallback
  #fence: number | undefined
  #lost = new AbortController()
  /** Fires at the deadline: lockTimeout after the last grant or refresh that succeeded was sent. */
  #deadline: ReturnType<typeof setTimeout> | undefined
  /** Refreshing every refreshInterval (from acquire until stopRefresh, release or loss). */
  #refreshing = false

  /** One attempt; the fence when acquired. */
  /** One attempt; `remaining`: ms this acquire still waits at most (an upgraded waiter's place in line lasts that long at most). */
  protected abstract _attempt(remaining: number): Promise<Granted>
  /** An acquire that gives up leaves the FIFO line (nothing to do where there is none). */
  protected async _leave(): Promise<void> {}
  /** How to wait for a release of upgraded holders (none: poll every retryInterval, as redis-semaphore does). */
  protected _waker(): Waker | undefined {
    return undefined
  }
  protected abstract _refresh(): Promise<boolean>
  protected abstract _release(): Promise<void>

  constructor(options: LockOptions = defaultTimeoutOptions) {
    const {
      lockTimeout = defaultTimeoutOptions.lockTimeout,
      acquireTimeout = defaultTimeoutOptions.acquireTimeout,
      acquireAttemptsLimit = defaultTimeoutOptions.acquireAttemptsLimit,
      retryInterval = defaultTimeoutOptions.retryInterval,
      refreshInterval = Math.round(lockTimeout * REFRESH_INTERVAL_COEF),
      onLockLost = defaultOnLockLost,
    } = options
    const { identifier, acquiredExternally } = checkIdentity(options)
    this._identifier = identifier
    this._acquiredExternally = acquiredExternally
    this._acquireOptions = { lockTimeout, acquireTimeout, acquireAttemptsLimit, retryInterval, identifier }
    this._refreshTimeInterval = refreshInterval
    this._onLockLost = onLockLost
  }

  /** The holder's identifier: the value stored in Redis for this lock, unique per holder. */
  get identifier(): string {
    return this._identifier
  }

  /** Whether the lock is held: true from a successful acquire until release, or until a refresh fails. */
  get isAcquired(): boolean {
    return this._acquired
  }

  /** fencelock: the fence of the current acquisition (strictly increasing per key), undefined when none (or acquired externally). */
  get fence(): number | undefined {
    return this.#fence
  }

  /** fencelock: aborted (reason: the LostLockError) when the lock is lost; aborted on release too. A new one per acquisition. */
  get signal(): AbortSignal {
    return this.#lost.signal
  }

  /**
   * The peer's acquire loop, until acquireTimeout or acquireAttemptsLimit: an attempt, then
   * retryInterval when an old process holds the lock (it wakes nobody); when only upgraded
   * processes hold it, a wait for their release's message (bounded by the lock's expiry).
   */
  protected async _acquire(abortSignal?: AbortSignal): Promise<boolean> {
    const { acquireTimeout, acquireAttemptsLimit, retryInterval } = this._acquireOptions
    let attempt = 0
    const end = performance.now() + acquireTimeout
    const waker = this._waker()
    let queued = false
    try {
      while (performance.now() < end && ++attempt <= acquireAttemptsLimit) {
        abortSignal?.throwIfAborted()
        waker?.arm()
        const sent = performance.now()
        const result = await this._attempt(end - performance.now())
        if (result.ok) {
          this.#fence = result.fence
          this.#heldFrom(sent)
          queued = false
          return true
        }
        queued = true
        if (!waker || !result.woken) await delay(retryInterval, abortSignal)
        else if (await waker.ready(retryInterval, abortSignal)) {
          const expiry = result.retry !== undefined && result.retry >= 0 ? result.retry : retryInterval
          await waker.wait(Math.min(expiry + 1, end - performance.now()), abortSignal)
        }
      }
      return false
    } finally {
      waker?.close()
      if (queued) await this._leave().catch(() => {})
    }
  }

  private _startRefresh(): void {
    this.#refreshing = true
    this._refreshInterval = setInterval(this._processRefresh, this._refreshTimeInterval)
    this._refreshInterval.unref()
  }

  /** Stops refreshing; the lock then expires in Redis, unannounced, as redis-semaphore's does (the deadline watch stops too). */
  stopRefresh(): void {
    if (this._refreshInterval) clearInterval(this._refreshInterval)
    this.#refreshing = false
    clearTimeout(this.#deadline)
  }

  private _processRefresh = async (): Promise<void> => {
    if (this._refreshing) return
    this._refreshing = true
    try {
      const sent = performance.now()
      const refreshed = await this._refresh()
      if (!this._acquired) return // released on purpose meanwhile, or lost at its deadline
      if (!refreshed) await this.#lose(`Lost ${this._kind} for key ${this._key}`)
      else if (this.#refreshing) this.#heldFrom(sent) // not after stopRefresh() meanwhile
    } finally {
      this._refreshing = false
    }
  }

  /**
   * The lock is held until lockTimeout after `sent` (when the grant or refresh that succeeded was
   * sent: Redis counts its PX from no earlier). fencelock's promise, kept here too: at that
   * deadline the signal aborts unless a refresh succeeded, whether Redis answered or not. The
   * peer's own state follows as the peer's suite needs it: isAcquired turns false and onLockLost
   * hear the loss when the refresh on its way at the deadline (sent then if it is late) fails, or
   * when one more lockTimeout passes without its answer (a refresh that is slow but succeeds
   * keeps the lock, as in redis-semaphore). Without refreshes (refreshInterval 0, stopRefresh)
   * only the signal says so.
   */
  #heldFrom(sent: number): void {
    clearTimeout(this.#deadline)
    const { lockTimeout } = this._acquireOptions
    const why = `Lost ${this._kind} for key ${this._key}: no refresh succeeded within lockTimeout (${lockTimeout} ms)`
    this.#deadline = setTimeout(
      () => {
        if (!this.#lost.signal.aborted) this.#lost.abort(new LostLockError(why))
        if (!this.#refreshing) return
        // A refresh that is late (a busy event loop) is sent now: its answer decides, as in the peer.
        if (!this._refreshing) void this._processRefresh()
        this.#deadline = setTimeout(() => void this.#lose(why), lockTimeout)
        this.#deadline.unref()
      },
      sent + lockTimeout - performance.now(),
    )
    this.#deadline.unref()
  }

  /** Lost: isAcquired turns false, the signal aborts and onLockLost hears it (by default a rejection no one handles, as the peer's). */
  async #lose(message: string): Promise<void> {
    if (!this._acquired) return
    this._acquired = false
    this.stopRefresh()
    const reason: unknown = this.#lost.signal.reason
    const lockLostError = this.#lost.signal.aborted && reason instanceof LostLockError ? reason : new LostLockError(message)
    if (!this.#lost.signal.aborted) this.#lost.abort(lockLostError)
    this._onLockLost(lockLostError)
  }

  /**
   * Takes the lock, trying until `acquireTimeout` or `acquireAttemptsLimit` runs out; then rejects
   * with `TimeoutError`. Once held, the lock is refreshed every `refreshInterval` until release.
   * `abortSignal` stops the waiting (the promise rejects with its reason).
   */
  async acquire(abortSignal?: AbortSignal): Promise<void> {
    const acquired = await this.tryAcquire(abortSignal)
    if (!acquired) throw new TimeoutError(`Acquire ${this._kind} ${this._key} timeout`)
  }

  /** `acquire`, resolving with `false` instead of rejecting when the lock could not be taken in time. */
  async tryAcquire(abortSignal?: AbortSignal): Promise<boolean> {
    if (this.#lost.signal.aborted) this.#lost = new AbortController()
    const external = this._acquiredExternally
    if (external) this.#fence = undefined
    const sent = performance.now()
    const acquired = external ? await this._refresh() : await this._acquire(abortSignal)
    if (!acquired) return false
    if (external) this.#heldFrom(sent)
    this._acquired = true
    this._acquiredExternally = false
    if (this._refreshTimeInterval > 0) this._startRefresh()
    return true
  }

  /**
   * Stops refreshing and deletes the lock in Redis if this holder still holds it (never another
   * holder's: the identifier is compared in Redis); the lock's `signal` aborts.
   */
  async release(): Promise<void> {
    clearTimeout(this.#deadline)
    if (this._refreshTimeInterval > 0) this.stopRefresh()
    if (this._acquired || this._acquiredExternally) await this._release()
    this._acquired = false
    this._acquiredExternally = false
    this.#lost.abort(new Error(`Released ${this._kind} for key ${this._key}`))
  }
}
