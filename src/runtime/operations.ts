import type { Backend } from '../topology/backend.js'
import { reportAcquire } from './events.js'
import { LockAbortedError, LockTimeoutError, type FencelockError } from '../errors/errors.js'
import { attemptError } from '../errors/failures.js'
import { keyCache } from '../util/keys.js'
import { holding, type Lease } from './lease.js'
import type { LeaseContext } from './lease-context.js'
import type { LeaseState } from './lease-state.js'
import { attemptOnce, attemptThen, type AttemptRequest } from './attempt.js'
import { extendByToken, inspectBounded, releaseByToken, revokeByToken, type ByToken } from './by-token.js'
import { ABORTED, unlessAborted } from '../util/abort.js'
import { Renewals } from './renewals.js'
import type { Runtime } from './runtime.js'
import { events, type LockKind } from '../util/telemetry.js'
import {
  checkBoolean,
  checkFunction,
  checkLeaseTtl,
  checkMaxHold,
  checkOptions,
  checkResource,
  checkSignal,
  checkToken,
  checkTtl,
  checkWait,
} from '../util/validate.js'
import { WaitQueues } from './wait.js'
import { newWaiter, type AcquireCall, type AcquireStats, type TryResult } from './waiter.js'
import { ACQUIRE_OPTIONS, TRY_ACQUIRE_OPTIONS, withAutoExtend, type AcquireOptions, type TryAcquireOptions } from './options.js'

export type { AcquireOptions, Defaults, TryAcquireOptions } from './options.js'

/** True while someone listens to the acquire events: only then are they counted and built. */
const listened = (): boolean => events.acquire.hasSubscribers || events.acquireStart.hasSubscribers

/** The options of a call that passed none: nothing to check. */
const NONE: AcquireOptions & TryAcquireOptions = Object.freeze({})

/** The lease, its renewals stopped `maxHold` ms after its acquire (nothing to do when off). */
const limitHold = (lease: LeaseState, maxHold: number): LeaseState => {
  if (maxHold !== Infinity) lease.limitHold(maxHold)
  return lease
}

/**
 * Acquire, try, withLock, release and extend by token, and inspect, for one primitive on one
 * topology (a `Backend`): validation, the fast path, event-driven waiting, leases. Written once;
 * every primitive's handle (the mutex's `Locks`, a semaphore) delegates here.
 */
export class Operations<Info> {
  readonly #runtime: Runtime
  readonly #backend: Backend<Info>
  readonly #waiting: WaitQueues
  readonly #leases: LeaseContext
  readonly #waiterTag: string
  readonly #kind: LockKind
  readonly #byToken: ByToken<Info>

  /** `kind` names the primitive in telemetry; `waiterTag` ends its waiter ids (a reader, a writer). */
  readonly #checkName: (value: unknown) => string

  /** `checkName` refuses a bad resource name (the multi lock's joined name has its own rule). */
  constructor(runtime: Runtime, backend: Backend<Info>, kind: LockKind, waiterTag = '', checkName: (value: unknown) => string = checkResource) {
    this.#checkName = checkName
    this.#runtime = runtime
    this.#backend = backend
    this.#kind = kind
    this.#waiterTag = waiterTag
    runtime.register(backend, this)
    const defaults = runtime.defaults
    this.#leases = {
      backend,
      // Automatic renewals go out batched where the primitive and topology allow it (renewals.ts).
      renewals: Renewals.for(backend),
      maxTtl: backend.maxTtl,
      allowShortTtl: defaults.allowShortTtl,
      driftFactor: defaults.driftFactor,
      kind,
      leases: runtime.leases,
    }
    this.#byToken = { runtime, backend, leases: this.#leases }
    this.#waiting = new WaitQueues({
      wake: backend.wake,
      subscribing: () => runtime.retainWake(backend),
      listened: runtime.wakeListened,
      // One channel per resource and instance: a release wakes only the process that is next.
      // Built once per resource (every fast-path attempt asks): no strings or arrays per call.
      channels: keyCache(runtime.instance, (instance, resource) => {
        return backend.channel(resource).map((c) => `${c}:${instance}`)
      }),
      attempt: (waiter) => {
        const attempt = attemptOnce(this.#leases, waiter)
        if (waiter.stats) this.count(waiter.stats, attempt)
        return attempt
      },
      leave: (waiter) => void backend.leave(waiter.resource, waiter.id ?? '').catch(() => {}),
      checkOpen: () => runtime.checkOpen(backend),
      grace: defaults.waiterGrace,
    })
  }

  private ttl(value: number | undefined): number {
    const d = this.#runtime.defaults
    return value === undefined ? d.ttl : checkLeaseTtl(value, 'ttl', this.#backend.maxTtl, d.allowShortTtl)
  }

  /**
   * Waits (event-driven, at most `wait` ms) and returns the lease; publishes `fencelock:acquire*`
   * when listened to (with the attempts sent and whether the first found the lock taken).
   */
  acquireLease(resource: string, options: AcquireOptions = NONE): Promise<Lease> {
    if (!listened()) return this.acquireCounting(resource, options, undefined)
    return reportAcquire(this.#kind, resource, options?.ttl, options?.wait, (stats) => this.acquireCounting(resource, options, stats))
  }

  /**
   * Validation (a bad option rejects, as an async function would), then the fast path or the
   * queue. Not an async function: uncontended, the caller gets the attempt's own promise, which
   * settles with the lease in the handler that reads the reply (no promise more of its own).
   */
  acquireCounting(resource: string, options: AcquireOptions = NONE, stats: AcquireStats | undefined): Promise<Lease> {
    let call: AcquireCall
    try {
      call = this.acquireCall(resource, options, stats)
    } catch (err) {
      return Promise.reject(err)
    }
    if (this.#waiting.has(resource)) {
      if (stats) stats.contended = true // behind another acquire of this process
      return this.queued(call, undefined)
    }
    // Fast path: nobody in this process waits for it, so try at once (one script call).
    // Newcomers meanwhile queue behind this attempt instead of racing it to Redis.
    this.#waiting.begin(resource, call.id)
    const request = { resource, ttl: call.ttl, id: call.id, autoExtend: call.autoExtend, deadline: call.deadline, retryToken: undefined }
    if (!call.signal && !stats) return attemptThen(this.#leases, request, (first) => this.afterFirst(call, first))
    return this.watchedFirst(call, attemptOnce(this.#leases, request))
  }

  /** The acquire's options read and checked; its waiter id when it may wait. */
  private acquireCall(resource: string, options: AcquireOptions, stats: AcquireStats | undefined): AcquireCall {
    this.#checkName(resource)
    if (options !== NONE) checkOptions(options, ACQUIRE_OPTIONS)
    const ttl = this.ttl(options.ttl)
    const wait = options.wait === undefined ? this.#runtime.defaults.wait : checkWait(options.wait)
    const signal = checkSignal(options.signal)
    const autoExtend = options.autoExtend === undefined ? false : checkBoolean(options.autoExtend, 'autoExtend')
    const maxHold = options.maxHold === undefined ? this.#runtime.defaults.maxHold : checkMaxHold(options.maxHold)
    this.#runtime.checkOpen(this.#backend)
    if (signal?.aborted) throw new LockAbortedError(resource, signal.reason)
    const started = performance.now()
    const id = wait > 0 ? this.#runtime.nextWaiterId(this.#waiterTag) : undefined
    return { resource, ttl, wait, signal, autoExtend, maxHold, started, id, stats, deadline: wait > 0 ? started + wait : Infinity }
  }

  /** The fast-path attempt counted (telemetry) and raced against the caller's signal. */
  private async watchedFirst(call: AcquireCall, attempt: Promise<TryResult>): Promise<Lease> {
    if (call.stats) this.count(call.stats, attempt)
    const outcome = call.signal ? await unlessAborted(attempt, call.signal) : await attempt
    if (outcome === ABORTED) {
      // The caller hears at once; the attempt in flight is settled when its reply comes.
      void attempt.then((late) => this.giveBack(call.resource, call.id, late))
      throw new LockAbortedError(call.resource, call.signal?.reason)
    }
    return this.afterFirst(call, outcome)
  }

  /** The fast-path attempt's outcome: the lease, a typed error, or the queue. */
  private afterFirst(call: AcquireCall, first: TryResult): Lease | Promise<Lease> {
    const { resource, wait } = call
    const done = 'lease' in first || wait === 0 || ('error' in first && first.permanent)
    if (done) this.#waiting.end(resource)
    if ('lease' in first) return limitHold(first.lease, call.maxHold)
    if ('error' in first && first.permanent) throw attemptError(resource, first)
    if (wait === 0) {
      if ('error' in first) throw attemptError(resource, first)
      if (first.blocked) throw first.blocked
      throw new LockTimeoutError(resource, performance.now() - call.started)
    }
    return this.queued(call, first)
  }

  /** Waits in this process's queue for the resource (event-driven; `first`: its fast-path outcome). */
  private async queued(call: AcquireCall, first: TryResult | undefined): Promise<Lease> {
    const { id, resource, ttl, started, wait, signal, stats } = call
    const lease = await new Promise<LeaseState>((resolve, reject) => {
      const waiter = newWaiter({ id, resource, ttl, started, deadline: started + wait, signal, stats, resolve, reject })
      this.#waiting.enqueue(waiter, first)
    })
    if (call.autoExtend) lease.setAutoExtend(true)
    return limitHold(lease, call.maxHold)
  }

  /** One attempt, never waits; publishes `fencelock:acquire*` as `acquire` does (outcome 'busy' when it returns null). */
  tryAcquireLease(resource: string, options: TryAcquireOptions = NONE): Promise<Lease | null> {
    if (!listened()) return this.tryCounting(resource, options, undefined)
    return reportAcquire(this.#kind, resource, options?.ttl, 0, (stats) => this.tryCounting(resource, options, stats))
  }

  private tryCounting(resource: string, options: TryAcquireOptions, stats: AcquireStats | undefined): Promise<Lease | null> {
    let request: AttemptRequest
    let maxHold = Infinity
    try {
      this.#checkName(resource)
      if (options !== NONE) checkOptions(options, TRY_ACQUIRE_OPTIONS)
      const ttl = this.ttl(options.ttl)
      const autoExtend = options.autoExtend === undefined ? false : checkBoolean(options.autoExtend, 'autoExtend')
      this.#runtime.checkOpen(this.#backend)
      const timeout = options.timeout === undefined ? this.#runtime.defaults.tryTimeout : checkTtl(options.timeout, 'timeout')
      maxHold = options.maxHold === undefined ? this.#runtime.defaults.maxHold : checkMaxHold(options.maxHold)
      request = { resource, ttl, id: undefined, autoExtend, deadline: performance.now() + timeout, retryToken: undefined }
    } catch (err) {
      return Promise.reject(err)
    }
    const answer = (result: TryResult): Lease | null => {
      if ('lease' in result) return limitHold(result.lease, maxHold)
      if ('error' in result) throw attemptError(resource, result)
      if (result.blocked) throw result.blocked
      return null
    }
    // The attempt's own promise carries the answer (no async function of its own), as acquire's fast path.
    if (!stats) return attemptThen(this.#leases, request, answer)
    const attempt = attemptOnce(this.#leases, request)
    this.count(stats, attempt)
    return attempt.then(answer)
  }

  async withLock<T>(resource: string, fn: (lease: Lease) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    checkFunction(fn, 'fn')
    checkOptions(options, ACQUIRE_OPTIONS)
    const lease = (await this.acquireLease(resource, withAutoExtend(options, true))) as LeaseState
    return holding(lease, fn, (l) => l.lostError())
  }

  async release(resource: string, token: string): Promise<boolean> {
    this.#checkName(resource)
    checkToken(token)
    this.#runtime.checkOpen(this.#backend)
    return releaseByToken(this.#byToken, resource, token)
  }

  /** Ends the lock held under `token` and tells its holder at once (see revokeByToken). */
  async revoke(resource: string, token: string): Promise<boolean> {
    this.#checkName(resource)
    checkToken(token)
    this.#runtime.checkOpen(this.#backend)
    const channel = this.#runtime.revocations
    if (channel === undefined) return releaseByToken(this.#byToken, resource, token)
    return revokeByToken(this.#byToken, resource, token, channel)
  }

  async extend(resource: string, token: string, ttl?: number): Promise<boolean> {
    this.#checkName(resource)
    checkToken(token)
    const ms = this.ttl(ttl)
    this.#runtime.checkOpen(this.#backend)
    return extendByToken(this.#byToken, resource, token, ms)
  }

  async inspect(resource: string): Promise<Info> {
    this.#checkName(resource)
    this.#runtime.checkOpen(this.#backend)
    return inspectBounded(this.#byToken, resource)
  }

  /** Telemetry: one more attempt sent; the first one tells whether the lock was taken. */
  private count(stats: AcquireStats, attempt: Promise<TryResult>): void {
    if (stats.attempts++ === 0) void attempt.then((result) => void (stats.contended ||= 'retry' in result))
  }

  /** Rejects every waiter (locks.close()). */
  closeWaiters(err: FencelockError): void {
    this.#waiting.closeAll(err)
  }

  /**
   * An aborted fast-path attempt has returned: release what it was granted, give up the queue place
   * it may have taken, and let whoever queued behind it in this process go.
   */
  private giveBack(resource: string, id: string | undefined, late: TryResult): void {
    this.#waiting.end(resource)
    if ('lease' in late) late.lease.giveBack()
    else if (id !== undefined) void this.#backend.leave(resource, id).catch(() => {})
  }
}
