import { randomBytes } from 'node:crypto'
import type { Backend } from '../topology/backend.js'
import { ClosedError } from '../errors/errors.js'
import { closedClient, errorText } from '../errors/failures.js'
import { RedisError } from '../errors/errors.js'
import { HeldLeases } from './held-leases.js'
import type { LeaseState } from './lease-state.js'
import type { FencelockError } from '../errors/errors.js'
import type { Defaults } from './options.js'
import { checkBoolean, checkOptions, optionNames } from '../util/validate.js'

/** Options of `locks.close()`. */
export interface CloseOptions {
  /**
   * Release every lease this instance still holds (a graceful shutdown), instead of leaving the
   * locks in Redis until their ttl. Rejects with `RedisError` if any release failed; the instance
   * is closed either way. Default: `false`.
   */
  release?: boolean
}

const CLOSE_OPTIONS = optionNames<CloseOptions>('close', { release: true })

/**
 * What exists once per `createLocks` instance, whatever the primitive: the instance id (wake-up
 * channels and waiter ids), the registry of held leases, one `Operations` (waiting, fast path,
 * leases) per primitive backend, the retained pub/sub connections, and `close()`.
 */
export class Runtime {
  readonly instance = randomBytes(6).toString('base64url')
  /** The held leases, and the subscription that hears their revocation. */
  readonly leases: HeldLeases<LeaseState>
  /** Where revocations of this instance's leases are published (undefined: not heard, a drop-in's layout). */
  readonly revocations: string | undefined
  readonly defaults: Defaults
  /** Set once any waiter of this instance listens to a wake-up channel (see WaitHooks.listened). */
  readonly wakeListened = { ever: false }
  readonly #operations = new Map<Backend<unknown>, { closeWaiters(err: FencelockError): void }>()
  readonly #retained = new Set<Backend<unknown>>()
  #seq = 0
  #closed = false

  constructor(defaults: Defaults, revocations?: string) {
    this.defaults = defaults
    this.revocations = revocations
    this.leases = new HeldLeases<LeaseState>(revocations, (backend) => this.retainWake(backend))
  }

  get closed(): boolean {
    return this.#closed
  }

  /** The operations of one backend (made once, so its waiters queue together) are closed with the instance. */
  register(backend: Backend<unknown>, ops: { closeWaiters(err: FencelockError): void }): void {
    this.#operations.set(backend, ops)
  }

  /** `<instance>:<n><tag>`: the instance part routes wake-ups; a primitive may tag its waiters (a reader, a writer). */
  nextWaiterId(tag = ''): string {
    return `${this.instance}:${++this.#seq}${tag}`
  }

  /** The pub/sub connection opens only when this instance first has to wait. */
  retainWake(backend: Backend<unknown>): void {
    if (this.#retained.has(backend)) return
    this.#retained.add(backend)
    backend.wake.retain()
  }

  checkOpen(backend: Backend<unknown>): void {
    if (this.#closed) throw new ClosedError('LOCKS_CLOSED', 'This locks instance is closed (locks.close() was called)')
    if (backend.isClosed()) throw closedClient()
  }

  async close(options: CloseOptions = {}): Promise<void> {
    checkOptions(options, CLOSE_OPTIONS)
    const release = options.release === undefined ? false : checkBoolean(options.release, 'release')
    if (this.#closed) return
    this.#closed = true
    for (const ops of this.#operations.values()) ops.closeWaiters(new ClosedError('LOCKS_CLOSED', 'The locks instance was closed while waiting'))
    const held = [...this.leases]
    for (const lease of held) lease.abandon('closed')
    this.leases.stop()
    // Each release is bounded by the lease's own limit (its remaining validity, at least 1 s).
    const failed = release ? (await settleEach(held, (lease) => lease.release(), RELEASES_IN_FLIGHT)).filter((r) => r.status === 'rejected') : []
    await Promise.allSettled([...this.#retained].map((backend) => backend.wake.release()))
    if (failed.length > 0) {
      const errors = failed.map((r) => (r as PromiseRejectedResult).reason as unknown)
      throw new RedisError(
        `close({ release: true }) could not release ${failed.length} of ${held.length} leases (they expire at their ttl): ${errorText(errors[0])}`,
        {
          cause: new AggregateError(errors, 'release failures'),
        },
      )
    }
  }
}

/**
 * Releases in flight at once when `close({ release: true })` gives back many leases. All at once,
 * the later ones would wait behind the others in the client and in Redis, and in quorum mode that
 * wait counts against each node's timeout: of 10,000 quorum leases, most failed that way.
 */
const RELEASES_IN_FLIGHT = 256

/** `Promise.allSettled(items.map(fn))` with at most `limit` calls of `fn` pending at a time. */
async function settleEach<T, R>(items: readonly T[], fn: (item: T) => Promise<R>, limit: number): Promise<PromiseSettledResult<R>[]> {
  const results: PromiseSettledResult<R>[] = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      try {
        results[i] = { status: 'fulfilled', value: await fn(items[i]!) }
      } catch (reason) {
        results[i] = { status: 'rejected', reason }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}
