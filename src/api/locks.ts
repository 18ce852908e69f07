import type { Backend, LockInfo } from '../topology/backend.js'
import { InvalidArgumentError } from '../errors/errors.js'
import { holding, type Lease } from '../runtime/lease.js'
import { readLocksOptions, type LocksOptions } from './locks-options.js'
import { topologyOf, type Topology } from './topology-choice.js'
import { Operations, type AcquireOptions, type Defaults, type TryAcquireOptions } from '../runtime/operations.js'
import { MutexPrimitive, mutexKeys } from '../primitives/mutex/mutex.js'
import { MultiPrimitive, multiName } from '../primitives/multi/multi.js'
import { acquireOrdered, atomicLease, checkMultiName, checkResources, combinedLease, leasesOf, type MultiLease } from '../primitives/multi/handle.js'
import { sameSlot } from '../util/keys.js'
import { SemaphorePrimitive } from '../primitives/semaphore/semaphore.js'
import { RwLockPrimitive } from '../primitives/rw-lock/rw-lock.js'
import { readWriteHandle, type ReadWriteInfo, type ReadWriteLock } from '../primitives/rw-lock/handle.js'
import { checkSemaphoreOptions, semaphoreHandle, type Semaphore, type SemaphoreInfo, type SemaphoreOptions } from '../primitives/semaphore/handle.js'
import { ElectionPrimitive, electionKeys, type ElectionInfo } from '../primitives/election/election.js'
import { checkElectionOptions, electionHandle, type Election, type ElectionOptions } from '../primitives/election/handle.js'
import { Runtime, type CloseOptions } from '../runtime/runtime.js'
import { revokeEach } from '../runtime/by-token.js'
import { CallChain } from '../runtime/reentrancy.js'
import { checkFunction, checkOptions, checkResource } from '../util/validate.js'
import { ACQUIRE_OPTIONS, withAutoExtend } from '../runtime/options.js'

export type { AcquireOptions, TryAcquireOptions } from '../runtime/operations.js'
export type { LocksOptions } from './locks-options.js'
export type { CloseOptions } from '../runtime/runtime.js'

/**
 * What `createLocks` returns: the mutex operations on any resource name, and the door to the
 * other primitives (`semaphore`, `readWrite`, `acquireAll`) on the same Redis and with the same
 * defaults. One instance per process and Redis setup is enough; `close()` it on shutdown.
 */
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
  /**
   * Ends the lock on `resource` and tells its holder at once: the holder's `lease.signal` aborts
   * with `LockLostError`, reason `'revoked'`, as soon as its process hears the notice (it listens
   * while it holds leases; one that missed it learns at its next extension). Without `token`, the
   * holder `inspect` reads now; with it, only that token's lock. Resolves with the tokens it ended:
   * empty if the lock was free, or its holder changed meanwhile (a holder that took it after the
   * read is left alone; call again to end it too). Fenced writes of the revoked holder are refused
   * once the next holder has claimed its fence; other work it does is stopped only by its signal.
   */
  revoke(resource: string, token?: string): Promise<readonly string[]>
  /** Holder, fence, remaining ttl and waiters of a resource (rejects with `RedisError` if Redis does not answer within the ttl, at most 10 s). */
  inspect(resource: string): Promise<LockInfo>
  /**
   * A counting semaphore named `name`: at most `options.limit` permits at once across all
   * processes (see `Semaphore`). The same name and limit give the same handle; every caller of one
   * semaphore must use the same limit while permits are held (another limit is refused with
   * `InvalidArgumentError`). Semaphores and mutexes of the same name are independent.
   */
  semaphore(name: string, options: SemaphoreOptions): Semaphore
  /**
   * A read/write lock named `name`: many readers or one writer (see `ReadWriteLock`). Independent
   * of a mutex or semaphore of the same name.
   */
  readWrite(name: string): ReadWriteLock
  /**
   * Locks several resources at once, all or nothing (see `MultiLease`): atomically in one script
   * where their keys share a node (one Redis, a quorum, or one Redis Cluster slot: names with a
   * common hash tag such as `{acct}:1`, `{acct}:2`); otherwise one by one in sorted order, giving
   * back what was taken if one cannot be had. Waiting never holds some of them in a way that blocks
   * others forever, and callers asking for [a, b] and [b, a] do not deadlock.
   */
  acquireAll(resources: readonly string[], options?: AcquireOptions): Promise<MultiLease>
  /** `acquireAll`, then `fn` with the lease auto-extended, then release, whatever happens (as `withLock`). */
  withLocks<T>(resources: readonly string[], fn: (lease: MultiLease) => Promise<T> | T, options?: AcquireOptions): Promise<T>
  /**
   * Leader election named `name` (see `Election`): candidates `campaign` in turn (FIFO, like
   * `acquire`), the leader's term is a lease whose fence guards its writes, and observers are told
   * of every change. `options`: the campaigns' defaults. Independent of a mutex of the same name.
   */
  election(name: string, options?: ElectionOptions): Election
  /**
   * Rejects pending waits, stops auto-extension (held leases' signals abort with reason
   * `'closed'`), closes the pub/sub connection, and with `{ release: true }` releases every lease
   * this instance holds. Leaves the client open; a lease's own `release()` still works after it.
   */
  close(options?: CloseOptions): Promise<void>
  /** True once `close()` was called: every later acquisition rejects with `ClosedError`. */
  readonly closed: boolean
}

/**
 * Creates locks on one Redis (ioredis or node-redis; single node or cluster), or, given an array
 * of clients, on a quorum of independent masters (a majority must grant each lock; see
 * docs/evidence/safety.md). Every lease carries a fencing token that strictly increases per resource, and
 * a signal that aborts when it is lost.
 */
export function createLocks(options: LocksOptions): Locks {
  const o = readLocksOptions(options)
  const { prefix, fenceRetention, waiterGrace, holder } = o
  const defaults: Defaults = {
    ttl: o.ttl,
    wait: o.wait,
    driftFactor: o.driftFactor,
    waiterGrace,
    allowShortTtl: o.allowShortTtl,
    tryTimeout: o.tryTimeout,
    maxHold: o.maxHold,
  }
  const cluster = o.topology.kind === 'single' && o.topology.redis.isCluster
  // Atomic where every key is on one node: always, unless a cluster spreads the names over slots.
  const atomic = (resources: readonly string[]) => !cluster || sameSlot(resources.map((r) => mutexKeys(prefix, r).lock))
  return new LockSet(
    topologyOf(o.topology, o.maxTtl),
    defaults,
    { prefix, fenceRetention, waiterGrace, holder },
    o.reentrant,
    atomic,
    o.topology.kind === 'quorum',
  )
}

/** What every primitive of one instance is made with: its keys' prefix, its scripts' fixed arguments, its leases' holder label. */
interface PrimitiveOptions {
  readonly prefix: string
  readonly fenceRetention: number
  readonly waiterGrace: number
  readonly holder: string
}

/** The mutex's handle, and the door to the other primitives of this instance. */
class LockSet implements Locks {
  readonly #runtime: Runtime
  readonly #mutex: Operations<LockInfo>
  readonly #topology: Topology
  readonly #primitiveOptions: PrimitiveOptions
  readonly #semaphores = new Map<string, Semaphore>()
  readonly #chain: CallChain
  #rw: { read: Operations<ReadWriteInfo>; write: Operations<ReadWriteInfo> } | undefined
  #multi: Operations<LockInfo[]> | undefined
  readonly #atomic: (resources: readonly string[]) => boolean
  readonly #quorum: boolean
  #elections: { ops: Operations<ElectionInfo>; backend: Backend<ElectionInfo> } | undefined
  /** Aborted by close(): the elections' observers end. */
  readonly #closing = new AbortController()

  constructor(
    topology: Topology,
    defaults: Defaults,
    primitiveOptions: PrimitiveOptions,
    reentrant: boolean,
    atomic: (resources: readonly string[]) => boolean,
    quorum: boolean,
  ) {
    this.#runtime = new Runtime(defaults, `${primitiveOptions.prefix || 'fencelock:'}revoked`)
    this.#quorum = quorum
    this.#atomic = atomic
    this.#chain = new CallChain(reentrant)
    this.#topology = topology
    this.#primitiveOptions = primitiveOptions
    this.#mutex = new Operations(this.#runtime, topology(new MutexPrimitive(primitiveOptions)), 'mutex')
  }

  async acquireAll(resources: readonly string[], options: AcquireOptions = {}): Promise<MultiLease> {
    const names = checkResources(resources)
    // Names and all, here: the ordered path passes each lock a copy of the known options.
    checkOptions(options, ACQUIRE_OPTIONS)
    const reentered = this.#chain.reenterSome(names)
    if (reentered === undefined) return this.#acquireAll(names, options)
    // Only what the chain does not hold yet is taken (all or nothing); the rest is re-entered.
    const rest = names.filter((r) => !reentered.has(r))
    const taken = rest.length === 0 ? [] : [await this.#acquireAll(rest, options)]
    return combinedLease(names, [...reentered.values(), ...taken])
  }

  async #acquireAll(names: readonly string[], options: AcquireOptions): Promise<MultiLease> {
    if (this.#atomic(names)) {
      // Each name was checked by checkResources; their joined name may be longer than one resource's.
      this.#multi ??= new Operations(this.#runtime, this.#topology(new MultiPrimitive(this.#primitiveOptions)), 'multi', '', checkMultiName)
      return atomicLease(await this.#multi.acquireLease(multiName(names), options))
    }
    return acquireOrdered(names, options, (r, o) => this.#mutex.acquireLease(r, o), this.#runtime.defaults.wait)
  }

  async withLocks<T>(resources: readonly string[], fn: (lease: MultiLease) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    checkFunction(fn, 'fn')
    // Checked here, names and all: what acquireAll gets is a copy of the known options.
    checkOptions(options, ACQUIRE_OPTIONS)
    const lease = await this.acquireAll(resources, withAutoExtend(options, true))
    return holding(lease, (l) => this.#chain.run('mutex', 'withLocks', leasesOf(l).values(), () => fn(l)))
  }

  readWrite(name: string): ReadWriteLock {
    checkResource(name, 'name')
    this.#rw ??= {
      read: new Operations(this.#runtime, this.#topology(new RwLockPrimitive(this.#primitiveOptions, 'r')), 'read', ':r'),
      write: new Operations(this.#runtime, this.#topology(new RwLockPrimitive(this.#primitiveOptions, 'w')), 'write', ':w'),
    }
    return readWriteHandle(name, this.#rw.read, this.#rw.write, this.#chain)
  }

  semaphore(name: string, options: SemaphoreOptions): Semaphore {
    checkResource(name, 'name')
    const { limit, fair } = checkSemaphoreOptions(options)
    const existing = this.#semaphores.get(name)
    if (existing) {
      if (existing.limit !== limit)
        throw new InvalidArgumentError(`Semaphore "${name}" was already made with limit ${existing.limit} in this instance, got limit ${limit}`)
      if (existing.fair !== fair)
        throw new InvalidArgumentError(`Semaphore "${name}" was already made with fair: ${existing.fair} in this instance, got fair: ${fair}`)
      return existing
    }
    // One Operations per permit count, made when first used: its waiter ids end in `:p<n>`, which
    // the acquire script reads to count what the waiters ahead wait for.
    const byCount = new Map<number, Operations<SemaphoreInfo>>()
    const opsFor = (permits: number) => {
      let ops = byCount.get(permits)
      if (!ops) {
        const backend = this.#topology(new SemaphorePrimitive({ ...this.#primitiveOptions, limit, permits, fair }))
        ops = new Operations(this.#runtime, backend, 'semaphore', permits === 1 ? '' : `:p${permits}`)
        byCount.set(permits, ops)
      }
      return ops
    }
    const handle = semaphoreHandle(name, { limit, fair }, opsFor, this.#chain)
    this.#semaphores.set(name, handle)
    return handle
  }

  election(name: string, options?: ElectionOptions): Election {
    checkResource(name, 'name')
    if (!this.#elections) {
      const backend = this.#topology(new ElectionPrimitive(this.#primitiveOptions))
      this.#elections = { backend, ops: new Operations(this.#runtime, backend, 'election') }
    }
    const { ops, backend } = this.#elections
    const checked = checkElectionOptions(options, backend.maxTtl, this.#runtime.defaults.allowShortTtl)
    const observers = electionKeys(this.#primitiveOptions.prefix, name).observers
    return electionHandle(name, checked, { ops, wake: backend.wake, observers, consensus: this.#quorum, closing: this.#closing.signal })
  }

  get closed(): boolean {
    return this.#runtime.closed
  }

  // A nested acquisition is answered from the call chain (no async wrapper on the hot path).
  acquire(resource: string, options?: AcquireOptions): Promise<Lease> {
    return this.#chain.answer('mutex', resource) ?? this.#mutex.acquireLease(resource, options)
  }

  tryAcquire(resource: string, options?: TryAcquireOptions): Promise<Lease | null> {
    return this.#chain.answer('mutex', resource) ?? this.#mutex.tryAcquireLease(resource, options)
  }

  async withLock<T>(resource: string, fn: (lease: Lease) => Promise<T> | T, options?: AcquireOptions): Promise<T> {
    checkFunction(fn, 'fn')
    const reentered = this.#chain.reenter('mutex', resource)
    if (reentered) return fn(reentered)
    return this.#mutex.withLock(resource, (lease) => this.#chain.run('mutex', 'withLock', [lease], () => fn(lease)), options)
  }

  release(resource: string, token: string): Promise<boolean> {
    return this.#mutex.release(resource, token)
  }

  extend(resource: string, token: string, ttl?: number): Promise<boolean> {
    return this.#mutex.extend(resource, token, ttl)
  }

  async revoke(resource: string, token?: string): Promise<readonly string[]> {
    const tokens = token !== undefined ? [token] : [(await this.#mutex.inspect(resource)).token].filter((t) => t !== null)
    return revokeEach(tokens, (t) => this.#mutex.revoke(resource, t))
  }

  inspect(resource: string): Promise<LockInfo> {
    return this.#mutex.inspect(resource)
  }

  close(options?: CloseOptions): Promise<void> {
    if (!this.#runtime.closed && (typeof options === 'object' || options === undefined)) this.#closing.abort()
    return this.#runtime.close(options)
  }
}
