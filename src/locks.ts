import { randomBytes, randomUUID } from 'node:crypto'
import type { Backend, LockInfo } from './backend.js'
import { ClosedError, FencelockError, InvalidArgumentError, LockAbortedError, LockLostError, LockTimeoutError, RedisError } from './errors.js'
import { Lease, type LeaseDriver } from './lease.js'
import { ABORTED, NO_REPLY, unlessAborted, withinLimit } from './limit.js'
import { isPermanentReplyError } from './redis/adapter.js'
import type { RedisClient } from './redis/client-types.js'
import { adapterFor, closedClient } from './redis/index.js'
import { mutexBackend } from './primitives/mutex.js'
import { checkReplicas, quorumNodeTimeout } from './quorum/options.js'
import { quorumBackend } from './quorum/backend.js'
import { replicatedBackend } from './quorum/replicated.js'
import { checkBoolean, checkFunction, checkNumber, checkResource, checkSignal, checkString, checkToken, checkTtl, checkLeaseTtl, checkWait, MAX_TTL } from './validate.js'
import { attemptError, errorText, WaitQueues, type TryResult, type Waiter } from './wait.js'

export interface LocksOptions {
  /**
   * An ioredis, iovalkey or node-redis client (single node, cluster or sentinel), or an array of
   * clients of independent masters for quorum mode. The caller keeps owning it.
   */
  redis: RedisClient | readonly RedisClient[]
  /** Prefix of every key. Default: `'fencelock:'`. */
  prefix?: string
  /** Default lease ttl in ms. Default: `10_000`. */
  ttl?: number
  /** Default wait budget of `acquire` in ms. Default: `15_000` (longer than one default ttl). */
  wait?: number
  /** Share of the ttl assumed lost to clock drift; validity = ttl - elapsed - (ttl * driftFactor + 2 ms). Default: `0.01`. */
  driftFactor?: number
  /** How long a resource's fence key is kept after its last acquisition (ms). Default: 7 days. */
  fenceRetention?: number
  /**
   * How long a queued waiter keeps its place past its next re-check, and a woken waiter past the
   * release, before it counts as dead and the line moves on (ms). Default: a quarter of `ttl`,
   * from 100 ms to 2 s.
   */
  waiterGrace?: number
  /**
   * Longest ttl any lease may ask for, in ms (a longer one is an `InvalidArgumentError`). In quorum
   * mode it is also how long a restarted node stays out of quorum counting, so keep it small.
   * Default: `30_000` with an array of clients, 24 days otherwise.
   */
  maxTtl?: number
  /**
   * Accept lease ttls (`ttl`, `maxTtl`, and the ttl of acquire, tryAcquire, withLock and extend)
   * below 100 ms. Without it they are refused with `InvalidArgumentError`: a ttl that short is
   * nearly always seconds written as milliseconds (`ttl: 30`), and such a lease spends its life
   * renewing. Default: `false`.
   */
  allowShortTtl?: boolean
  /**
   * How long `tryAcquire` waits for Redis' answer before it rejects with `RedisError` (ms). It
   * never waits for the lock, so it should not wait long for Redis either. Default: `2_000` (less
   * if the lease validity is shorter).
   */
  tryTimeout?: number
  /** Quorum mode only. */
  quorum?: {
    /** Per-node timeout of each request in ms. Default: a tenth of the ttl, from 10 to 1,000 ms. */
    nodeTimeout?: number
  }
  /**
   * Single-Redis mode only (not a cluster): every acquire and extension is followed by
   * `WAIT count timeout` on the same connection; with fewer acknowledgements the lock is released
   * and acquire fails with `ReplicationError` (an extension fails, keeping the old deadline).
   */
  replicas?: {
    /** Replicas that must acknowledge. */
    count: number
    /** How long WAIT may block, in ms. */
    timeout: number
  }
}

export interface AcquireOptions {
  /** Lease ttl in ms. Default: the instance's `ttl`. */
  ttl?: number
  /** How long to wait for the lock in ms (`Infinity` to wait forever). Default: the instance's `wait`. */
  wait?: number
  /** Aborts the wait with `LockAbortedError`. */
  signal?: AbortSignal
  /** Keep extending the lease (every ttl/3) until released. Default: false (true in `withLock`). */
  autoExtend?: boolean
}

export interface TryAcquireOptions {
  /** Lease ttl in ms. Default: the instance's `ttl`. */
  ttl?: number
  /** Keep extending the lease (every ttl/3) until released. Default: false. */
  autoExtend?: boolean
  /** How long to wait for Redis' answer in ms. Default: the instance's `tryTimeout` (2 s). */
  timeout?: number
}

export interface CloseOptions {
  /**
   * Release every lease this instance still holds (a graceful shutdown), instead of leaving the
   * locks in Redis until their ttl. Rejects with `RedisError` if any release failed; the instance
   * is closed either way. Default: `false`.
   */
  release?: boolean
}

export interface Locks {
  /** Waits (event-driven, at most `wait` ms) for the lock and returns its lease. */
  acquire(resource: string, options?: AcquireOptions): Promise<Lease>
  /** One attempt, never waits: the lease, or null when someone else holds the lock or is ahead in line. */
  tryAcquire(resource: string, options?: TryAcquireOptions): Promise<Lease | null>
  /** Acquires, runs `fn` with the lease auto-extended, and releases whatever happens. */
  withLock<T>(resource: string, fn: (lease: Lease) => Promise<T> | T, options?: AcquireOptions): Promise<T>
  /**
   * Releases the lock held under `token` (a lease's `token`, kept elsewhere: another process, a
   * job record, the CLI's output). Resolves true if this call released it, false if that token no
   * longer held it (expired, released, taken over); the next waiter is woken as after
   * `lease.release()`.
   */
  release(resource: string, token: string): Promise<boolean>
  /**
   * Pushes the expiry of the lock held under `token` to `ttl` ms from now (default: the
   * instance's ttl). Resolves true if extended, false if that token no longer holds it. Count the
   * new validity from before the call: the lock may end `ttl` ms after the request was sent.
   */
  extend(resource: string, token: string, ttl?: number): Promise<boolean>
  /** Holder, fence, remaining ttl and waiters of a resource (rejects with `RedisError` if Redis does not answer within the ttl, at most 10 s). */
  inspect(resource: string): Promise<LockInfo>
  /**
   * Rejects pending waits, stops auto-extension (held leases' signals abort with reason
   * `'closed'`), closes the pub/sub connection, and with `{ release: true }` releases every lease
   * this instance holds. Leaves the client open; a lease's own `release()` still works after it.
   */
  close(options?: CloseOptions): Promise<void>
  readonly closed: boolean
}

const DAY = 86_400_000

/**
 * Creates locks on one Redis (ioredis or node-redis; single node or cluster), or, given an array
 * of clients, on a quorum of independent masters (a majority must grant each lock; see
 * docs/safety.md). Every lease carries a fencing token that strictly increases per resource, and
 * a signal that aborts when it is lost.
 */
export function createLocks(options: LocksOptions): Locks {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`Expected options to be an object, got ${String(options)}`)
  const quorum = Array.isArray(options.redis)
  const prefix = options.prefix === undefined ? 'fencelock:' : checkString(options.prefix, 'prefix', true)
  const allowShortTtl = options.allowShortTtl === undefined ? false : checkBoolean(options.allowShortTtl, 'allowShortTtl')
  const maxTtl = options.maxTtl === undefined ? (quorum ? 30_000 : MAX_TTL) : checkLeaseTtl(options.maxTtl, 'maxTtl', MAX_TTL, allowShortTtl)
  const ttl = options.ttl === undefined ? Math.min(10_000, maxTtl) : checkLeaseTtl(options.ttl, 'ttl', maxTtl, allowShortTtl)
  const wait = options.wait === undefined ? 15_000 : checkWait(options.wait)
  const tryTimeout = options.tryTimeout === undefined ? 2_000 : checkTtl(options.tryTimeout, 'tryTimeout')
  const driftFactor = options.driftFactor === undefined ? 0.01 : checkNumber(options.driftFactor, 'driftFactor', 0, 0.5)
  const fenceRetention = options.fenceRetention === undefined ? 7 * DAY : checkTtl(options.fenceRetention, 'fenceRetention')
  // A dead waiter keeps the line waiting this long past the holder's ttl: scale it with the ttl.
  const waiterGrace =
    options.waiterGrace === undefined ? Math.min(2_000, Math.max(100, Math.round(ttl / 4))) : checkTtl(options.waiterGrace, 'waiterGrace', 60_000)
  if (quorum) {
    if (options.replicas !== undefined) throw new InvalidArgumentError('Expected `replicas` only with a single client: in quorum mode the majority is the replication')
    const clients = options.redis as unknown[]
    const adapters = clients.map((client, i) => adapterFor(client, `redis[${i}]`))
    if (adapters.length === 0) throw new InvalidArgumentError('Expected `redis` to hold at least one client, got an empty array')
    if (new Set(adapters).size !== adapters.length) throw new InvalidArgumentError('Expected `redis` to hold distinct clients (one per independent Redis master), got the same client twice')
    const nodeTimeout = quorumNodeTimeout(options.quorum)
    const backend = quorumBackend(adapters, { prefix, maxTtl, fenceRetention, waiterGrace, nodeTimeout })
    return new LockSet(backend, { ttl, wait, driftFactor, waiterGrace, allowShortTtl, tryTimeout })
  }
  if (options.quorum !== undefined) throw new InvalidArgumentError('Expected `quorum` only with an array of clients (quorum mode)')
  const redis = adapterFor(options.redis)
  const backend = mutexBackend(redis, { prefix, maxTtl, fenceRetention, waiterGrace })
  if (options.replicas === undefined) return new LockSet(backend, { ttl, wait, driftFactor, waiterGrace, allowShortTtl, tryTimeout })
  const replicas = checkReplicas(options.replicas)
  if (redis.isCluster) throw new InvalidArgumentError('Expected `replicas` with a single Redis, not a cluster client (WAIT cannot be routed to the lock\'s node)')
  return new LockSet(replicatedBackend(backend, redis, { prefix, fenceRetention, waiterGrace, ...replicas }), { ttl, wait, driftFactor, waiterGrace, allowShortTtl, tryTimeout })
}

interface Defaults {
  ttl: number
  wait: number
  driftFactor: number
  /** How long a waiter keeps its place in the Redis queue past its next re-check (ms). */
  waiterGrace: number
  /** Lease ttls below the floor (100 ms) are accepted. */
  allowShortTtl: boolean
  /** How long tryAcquire waits for Redis' answer (ms). */
  tryTimeout: number
}

/** The facade over one backend: validation, fast path, waiting, leases. Shared by every primitive. */
export class LockSet implements Locks {
  readonly #backend: Backend
  readonly #defaults: Defaults
  readonly #leases = new Set<Lease>()
  readonly #waiting: WaitQueues
  readonly #driver: LeaseDriver
  readonly #instance = randomBytes(6).toString('base64url')
  #seq = 0
  #closed = false
  #retained = false

  constructor(backend: Backend, defaults: Defaults) {
    this.#backend = backend
    this.#defaults = defaults
    const leases = this.#leases
    this.#driver = {
      maxTtl: backend.maxTtl,
      extend: (lease, ttl) => backend.extend(lease.resource, lease.token, ttl),
      release: (lease) => backend.release(lease.resource, lease.token),
      drift: (ttl) => Math.floor(ttl * defaults.driftFactor) + 2,
      settled: (lease) => void leases.delete(lease),
    }
    this.#waiting = new WaitQueues({
      wake: {
        retain: () => backend.wake.retain(),
        release: () => backend.wake.release(),
        listen: (channel, listener) => {
          // The pub/sub connection opens only when this instance first has to wait.
          if (!this.#retained) {
            this.#retained = true
            backend.wake.retain()
          }
          return backend.wake.listen(channel, listener)
        },
        unlisten: (channel, listener) => backend.wake.unlisten(channel, listener),
        isActive: (channel) => backend.wake.isActive?.(channel) === true,
        onResync: (listener) => backend.wake.onResync(listener),
      },
      // One channel per resource and instance: a release wakes only the process that is next.
      channel: (resource) => `${backend.channel(resource)}:${this.#instance}`,
      attempt: (waiter) => this.#try(waiter.resource, waiter.ttl, waiter.id, false, waiter.deadline, waiter.retryToken),
      leave: (waiter) => void backend.leave(waiter.resource, waiter.id).catch(() => {}),
      checkOpen: () => this.#checkOpen(),
      grace: defaults.waiterGrace,
    })
  }

  get closed(): boolean {
    return this.#closed
  }

  async acquire(resource: string, options: AcquireOptions = {}): Promise<Lease> {
    checkResource(resource)
    const ttl = options.ttl === undefined ? this.#defaults.ttl : checkLeaseTtl(options.ttl, 'ttl', this.#backend.maxTtl, this.#defaults.allowShortTtl)
    const wait = options.wait === undefined ? this.#defaults.wait : checkWait(options.wait)
    const signal = checkSignal(options.signal)
    const autoExtend = options.autoExtend === undefined ? false : checkBoolean(options.autoExtend, 'autoExtend')
    this.#checkOpen()
    if (signal?.aborted) throw new LockAbortedError(resource, signal.reason)
    const started = performance.now()
    const id = wait > 0 ? `${this.#instance}:${++this.#seq}` : ''
    let first: TryResult | undefined
    if (!this.#waiting.has(resource)) {
      // Fast path: nobody in this process waits for it, so try at once (one script call).
      // Newcomers meanwhile queue behind this attempt instead of racing it to Redis.
      this.#waiting.begin(resource, id)
      const attempt = this.#try(resource, ttl, id, autoExtend, wait > 0 ? started + wait : Infinity)
      const outcome = signal ? await unlessAborted(attempt, signal) : await attempt
      if (outcome === ABORTED) {
        // The caller hears at once; the attempt in flight is settled when its reply comes.
        void attempt.then((late) => this.#giveBack(resource, id, late))
        throw new LockAbortedError(resource, signal?.reason)
      }
      first = outcome
      const done = 'lease' in first || wait === 0 || ('error' in first && first.permanent)
      if (done) this.#waiting.end(resource)
      if ('lease' in first) return first.lease
      if ('error' in first && first.permanent) throw attemptError(resource, first)
      if (wait === 0) {
        if ('error' in first) throw attemptError(resource, first)
        if (first.blocked) throw first.blocked
        throw new LockTimeoutError(resource, performance.now() - started)
      }
    }
    const lease = await new Promise<Lease>((resolve, reject) => {
      const waiter: Waiter = {
        id,
        resource,
        ttl,
        started,
        deadline: started + wait,
        signal,
        queued: false,
        settled: false,
        lastError: undefined,
        failures: 0,
        retryToken: undefined,
        standby: undefined,
        resolve,
        reject,
        wake: undefined,
        timers: [],
        onAbort: undefined,
      }
      this.#waiting.enqueue(waiter, first)
    })
    if (autoExtend) lease.setAutoExtend(true)
    return lease
  }

  async tryAcquire(resource: string, options: TryAcquireOptions = {}): Promise<Lease | null> {
    checkResource(resource)
    const ttl = options.ttl === undefined ? this.#defaults.ttl : checkLeaseTtl(options.ttl, 'ttl', this.#backend.maxTtl, this.#defaults.allowShortTtl)
    const autoExtend = options.autoExtend === undefined ? false : checkBoolean(options.autoExtend, 'autoExtend')
    this.#checkOpen()
    const timeout = options.timeout === undefined ? this.#defaults.tryTimeout : checkTtl(options.timeout, 'timeout')
    const result = await this.#try(resource, ttl, '', autoExtend, performance.now() + timeout)
    if ('lease' in result) return result.lease
    if ('error' in result) throw attemptError(resource, result)
    if (result.blocked) throw result.blocked
    return null
  }

  async withLock<T>(resource: string, fn: (lease: Lease) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    checkFunction(fn, 'fn')
    const lease = await this.acquire(resource, { ...options, autoExtend: options.autoExtend ?? true })
    let result: T
    let lost: LockLostError | undefined
    try {
      result = await fn(lease)
    } finally {
      // The work is done (or failed); a release that fails leaves the lock to expire at its ttl,
      // and must never replace the outcome of `fn`.
      lost = lease.lostError()
      await lease.release().catch(() => {})
    }
    // fn finished, but not under the lock all along: its result must not pass as protected.
    if (lost) throw lost
    return result
  }

  async release(resource: string, token: string): Promise<boolean> {
    checkResource(resource)
    checkToken(token)
    this.#checkOpen()
    // A lease of this instance: release it as such, so its timers stop and its state is right.
    const local = this.#leaseOf(resource, token)
    if (local) return local.release()
    // Bounded like lease.release(): a Redis that does not answer must not hold the caller forever.
    return this.#bounded(`release lock "${resource}"`, Math.min(this.#defaults.ttl, 10_000), this.#backend.release(resource, token))
  }

  async extend(resource: string, token: string, ttl?: number): Promise<boolean> {
    checkResource(resource)
    checkToken(token)
    const ms = ttl === undefined ? this.#defaults.ttl : checkLeaseTtl(ttl, 'ttl', this.#backend.maxTtl, this.#defaults.allowShortTtl)
    this.#checkOpen()
    const local = this.#leaseOf(resource, token)
    if (local) {
      try {
        await local.extend(ms)
        return true
      } catch (err) {
        if (err instanceof LockLostError) return false
        throw err
      }
    }
    // A reply later than the new ttl minus drift extends nothing the caller can count on.
    return this.#bounded(`extend lock "${resource}"`, ms - this.#driver.drift(ms), this.#backend.extend(resource, token, ms))
  }

  async inspect(resource: string): Promise<LockInfo> {
    checkResource(resource)
    this.#checkOpen()
    return this.#bounded(`inspect lock "${resource}"`, Math.min(this.#defaults.ttl, 10_000), this.#backend.inspect(resource))
  }

  async close(options: CloseOptions = {}): Promise<void> {
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`Expected close options to be an object, got ${String(options)}`)
    const release = options.release === undefined ? false : checkBoolean(options.release, 'release')
    if (this.#closed) return
    this.#closed = true
    this.#waiting.closeAll(new ClosedError('LOCKS_CLOSED', 'The locks instance was closed while waiting'))
    const held = [...this.#leases]
    for (const lease of held) lease.abandon('closed')
    // Each release is bounded by the lease's own limit (its remaining validity, at least 1 s).
    const failed = release ? (await Promise.allSettled(held.map((lease) => lease.release()))).filter((r) => r.status === 'rejected') : []
    if (this.#retained) await this.#backend.wake.release()
    if (failed.length > 0) {
      const errors = failed.map((r) => (r as PromiseRejectedResult).reason as unknown)
      throw new RedisError(`close({ release: true }) could not release ${failed.length} of ${held.length} leases (they expire at their ttl): ${errorText(errors[0])}`, {
        cause: new AggregateError(errors, 'release failures'),
      })
    }
  }

  /**
   * An aborted fast-path attempt has returned: release what it was granted, give up the queue place
   * it may have taken, and let whoever queued behind it in this process go.
   */
  #giveBack(resource: string, id: string, late: TryResult): void {
    this.#waiting.end(resource)
    if ('lease' in late) void late.lease.release().catch(() => {})
    else if (id !== '') void this.#backend.leave(resource, id).catch(() => {})
  }

  #leaseOf(resource: string, token: string): Lease | undefined {
    for (const lease of this.#leases) if (lease.token === token && lease.resource === resource) return lease
    return undefined
  }

  /** `work`, or a typed error if it fails or has no answer within `limit` ms. */
  async #bounded<T>(what: string, limit: number, work: Promise<T>): Promise<T> {
    let outcome: T | typeof NO_REPLY
    try {
      outcome = await withinLimit(work, Math.max(1, limit))
    } catch (err) {
      if (err instanceof FencelockError) throw err
      throw new RedisError(`Could not ${what}: ${(err as Error)?.message ?? err}`, { cause: err })
    }
    if (outcome === NO_REPLY) throw new RedisError(`No reply from Redis within ${Math.round(limit)} ms: could not ${what}`)
    return outcome
  }

  #checkOpen(): void {
    if (this.#closed) throw new ClosedError('LOCKS_CLOSED', 'This locks instance is closed (locks.close() was called)')
    if (this.#backend.isClosed()) throw closedClient()
  }

  /**
   * One attempt. Validity is counted from before the request was sent: a reply that arrives after
   * the ttl minus drift is worthless, so the attempt gives up then, and a lock that such a late
   * reply grants is released at once.
   */
  async #try(resource: string, ttl: number, waiterId: string, autoExtend: boolean, deadline = Infinity, reuse?: string): Promise<TryResult> {
    const start = performance.now()
    const token = reuse ?? randomUUID()
    const budget = ttl - this.#driver.drift(ttl)
    // Never wait for a reply past the caller's wait deadline either (Redis down, offline queue).
    const limit = Math.max(0, Math.min(budget, deadline - start))
    let late = false
    const attempt = this.#backend.attempt(resource, token, ttl, waiterId)
    try {
      const outcome = await withinLimit(attempt, limit)
      if (outcome === NO_REPLY) {
        late = true
        return { error: new RedisError(`No reply from Redis within ${Math.round(limit)} ms (Redis down, paused or unreachable, or the client is reconnecting)`), permanent: false, silent: limit }
      }
      if (!outcome.acquired) return outcome.blocked ? { retry: outcome.retry, blocked: outcome.blocked } : { retry: outcome.retry }
      if (performance.now() - start >= budget) {
        void this.#backend.release(resource, token).catch(() => {})
        return { error: new RedisError(`The reply for lock "${resource}" arrived after its validity`), permanent: false }
      }
      const lease = new Lease(this.#driver, { resource, token, fence: outcome.fence, ttl, start, autoExtend })
      this.#leases.add(lease)
      return { lease }
    } catch (err) {
      // The attempt may have run before the connection failed: retry with the same token. (Not
      // after a timeout: that attempt is still in flight and its late grant is released below.)
      return { error: err, permanent: isPermanentReplyError(err), token }
    } finally {
      if (late) {
        attempt.then(
          (outcome) => {
            if (outcome.acquired) void this.#backend.release(resource, token).catch(() => {})
          },
          () => {},
        )
      }
    }
  }
}

export { FencelockError }
