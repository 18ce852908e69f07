import { AsyncLocalStorage } from 'node:async_hooks'
import { LockReentryError } from '../errors/errors.js'
import { delegatingLease, type Lease } from './lease.js'

/** What a call chain can hold. A mutex, a read/write lock and a semaphore of one name are three locks (their own keys). */
export type HeldKind = 'mutex' | 'read' | 'write' | 'semaphore'

/** The `with…` call that marked the chain: named in the error, so the user finds the outer scope. */
export type Scope = 'withLock' | 'withLocks' | 'withRead' | 'withWrite' | 'withPermit'

interface Held {
  readonly lease: Lease
  readonly kind: HeldKind
  readonly scope: Scope
}

// Read and write leases of one lock share an entry: the rules below depend on which side is held.
const keyOf = (kind: HeldKind, name: string): string => `${kind === 'read' || kind === 'write' ? 'rw' : kind}:${name}`

/**
 * Which leases the current call chain holds: set by `withLock`, `withLocks`, `withRead`,
 * `withWrite` and `withPermit` for the duration of their `fn` (AsyncLocalStorage), so it follows
 * awaits, promise callbacks and timers created inside `fn`, and not other call chains of the same
 * process. A plain `acquire()` marks nothing: it has no scope to mark.
 *
 * A nested acquisition of a lock the chain holds never waits for itself. The rules, where
 * "re-enters" means it gets a handle on the held lease (reentrant: true) and LOCK_REENTRY
 * (LockReentryError, at once) otherwise:
 * - mutex in a mutex, or in a multi lease that holds it: re-enters that resource's grant.
 * - multi (`acquireAll`) naming mutexes the chain holds: re-enters those and takes the rest, all or
 *   nothing. Waiting for a held one is waiting for oneself, whatever the rest.
 * - write in write, read in write: re-enter the write lease. The writer excludes everybody, so
 *   reading under it is safe; a second lease would wait for the writer, which is oneself.
 * - read in read: re-enters the read lease. A second read lease usually succeeds at once, but the
 *   queue is fair: a writer queued between the two makes the nested read wait for the writer,
 *   which waits for the outer read. So it is refused even when the lock looks free.
 * - write in read: LOCK_REENTRY always, reentrant or not. The writer waits for every reader, the
 *   outer one included (an upgrade deadlocks), and a read lease cannot stand in for a write.
 * - permit in a permit of the same semaphore: re-enters the held permit. With limit 1 it waits
 *   for itself; with limit n, n nested permits do; and with FIFO a waiter queued ahead of it waits
 *   for the outer permit once all are taken, so any limit can deadlock.
 * - try forms answer as the waiting forms do: a handle or LOCK_REENTRY, never a null that would
 *   say someone else holds it.
 * A handle's release (or `await using`) ends only itself; the outer holder keeps the lock. With no
 * chain marked the check costs one `getStore()`: no Redis call, no allocation.
 */
export class CallChain {
  readonly #storage = new AsyncLocalStorage<ReadonlyMap<string, Held>>()
  readonly #reentrant: boolean

  constructor(reentrant: boolean) {
    this.#reentrant = reentrant
  }

  /**
   * A handle on the lease the chain already holds for `name` of `kind`, or undefined if it holds
   * none. Throws `LockReentryError` where re-entering is not allowed (see the rules above).
   */
  reenter(kind: HeldKind, name: string): Lease | undefined {
    const store = this.#storage.getStore()
    if (store === undefined) return undefined
    const held = store.get(keyOf(kind, name))
    if (held === undefined || !held.lease.held) return undefined
    if (kind === 'write' && held.kind === 'read') {
      throw new LockReentryError(
        name,
        `Read/write lock "${name}" is already held by this call chain (an enclosing withRead), and a write lease would wait for that read lease forever: upgrading a read lease deadlocks, also with reentrant: true. Take the write lease from the start, or end the read lease first`,
      )
    }
    if (!this.#reentrant) throw new LockReentryError(name, refusal(kind, name, held.scope))
    return reentered(held.lease)
  }

  /** `reenter` as an acquisition's answer: a promise of the handle, a rejection, or undefined (take it as usual). */
  answer(kind: HeldKind, name: string): Promise<Lease> | undefined {
    try {
      const lease = this.reenter(kind, name)
      return lease && Promise.resolve(lease)
    } catch (err) {
      return Promise.reject(err)
    }
  }

  /**
   * For `acquireAll(names)`: handles on the mutexes among `names` the chain holds, or undefined if
   * it holds none of them. Throws `LockReentryError` when the instance is not reentrant.
   */
  reenterSome(names: readonly string[]): Map<string, Lease> | undefined {
    const store = this.#storage.getStore()
    if (store === undefined) return undefined
    const held = new Map<string, Held>()
    for (const name of names) {
      const entry = store.get(keyOf('mutex', name))
      if (entry?.lease.held) held.set(name, entry)
    }
    if (held.size === 0) return undefined
    if (!this.#reentrant) {
      const [first] = held.keys()
      const scopes = [...new Set([...held.values()].map((h) => h.scope))].join(', ')
      const label = [...held.keys()].map((n) => JSON.stringify(n)).join(', ')
      throw new LockReentryError(
        first!,
        `${held.size === 1 ? `Lock ${label} is` : `Locks ${label} are`} already held by this call chain (an enclosing ${scopes}); acquireAll would wait for itself. Use the outer lease, or createLocks({ reentrant: true })`,
      )
    }
    return new Map([...held].map(([name, h]) => [name, reentered(h.lease)]))
  }

  /** Runs `fn` with `leases` (each under its `resource`) held by the chain. */
  run<T>(kind: HeldKind, scope: Scope, leases: Iterable<Lease>, fn: () => T): T {
    const inner = new Map(this.#storage.getStore())
    for (const lease of leases) inner.set(keyOf(kind, lease.resource), { lease, kind, scope })
    return this.#storage.run(inner, fn)
  }
}

function refusal(kind: HeldKind, name: string, scope: Scope): string {
  const advice = 'Use the outer lease, or createLocks({ reentrant: true })'
  if (kind === 'semaphore') {
    return `A permit of semaphore "${name}" is already held by this call chain (an enclosing ${scope}); another permit could wait for itself (all permits taken, or a waiter queued ahead of it that waits for this one). ${advice}`
  }
  const what = kind === 'mutex' ? 'Lock' : 'Read/write lock'
  return `${what} "${name}" is already held by this call chain (an enclosing ${scope}); waiting for it would wait for itself. ${advice}`
}

/**
 * The outer lease as seen from a nested acquisition: same token, fence and signal; its release
 * only ends this handle (the outermost holder releases the lock), its extend extends the lock.
 */
function reentered(outer: Lease): Lease {
  let released = false
  return delegatingLease(outer, {
    get remaining() {
      return released ? 0 : outer.remaining
    },
    get held() {
      return !released && outer.held
    },
    async release() {
      if (released) return false
      released = true
      return outer.held
    },
    async [Symbol.asyncDispose]() {
      released = true
    },
  })
}
