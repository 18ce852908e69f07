import { AsyncLocalStorage } from 'node:async_hooks'
import { LockReentryError } from './errors.js'
import { delegatingLease, type Lease } from './lease.js'

/**
 * Which mutex leases the current call chain holds: set by `withLock` for the duration of its `fn`
 * (AsyncLocalStorage), so it follows awaits, promise callbacks and timers created inside `fn`, and
 * not other call chains of the same process. A nested acquire of a held resource re-enters it
 * (`reentrant: true`) or fails at once; it never waits for itself.
 */
export class CallChain {
  readonly #storage = new AsyncLocalStorage<ReadonlyMap<string, Lease>>()
  readonly #reentrant: boolean

  constructor(reentrant: boolean) {
    this.#reentrant = reentrant
  }

  /**
   * A handle on the lease the chain already holds for `resource`, or undefined if it holds none.
   * Throws `LockReentryError` when the instance is not reentrant.
   */
  reenter(resource: string): Lease | undefined {
    const held = this.#storage.getStore()?.get(resource)
    if (!held || !held.held) return undefined
    if (!this.#reentrant) throw new LockReentryError(resource)
    return reentered(held)
  }

  /** Runs `fn` with `lease` held by the chain. */
  run<T>(lease: Lease, fn: () => T): T {
    const outer = this.#storage.getStore()
    const inner = new Map(outer)
    inner.set(lease.resource, lease)
    return this.#storage.run(inner, fn)
  }
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
