import { InvalidArgumentError } from '../../errors/errors.js'
import type { Lease } from '../../runtime/lease.js'
import type { AcquireOptions, Operations, TryAcquireOptions } from '../../runtime/operations.js'
import type { SemaphoreInfo } from './semaphore.js'
import type { CallChain } from '../../runtime/reentrancy.js'
import { checkFunction, checkOptions, describeValue, optionNames } from '../../util/validate.js'

export type { SemaphoreInfo } from './semaphore.js'

/** Options of `locks.semaphore(name, options)`. */
export interface SemaphoreOptions {
  /** Permits that may be held at once, across every process: an integer from 1 to 1,000. */
  limit: number
}

/**
 * A fair counting semaphore: at most `limit` permits held at once across all processes. Each
 * permit is a `Lease` of its own (token, fence, deadline, signal, extend, release, `await using`)
 * and expires alone, by the Redis server's clock, if its holder dies. Waiting is event-driven and
 * FIFO, as for the mutex.
 */
export interface Semaphore {
  /** The name given to `locks.semaphore(name, ...)`. */
  readonly name: string
  /** Permits that may be held at once, across every process. */
  readonly limit: number
  /** Waits (event-driven, at most `wait` ms) for a permit. */
  acquire(options?: AcquireOptions): Promise<Lease>
  /** One attempt, never waits: a permit, or null when all are held or others are ahead in line. */
  tryAcquire(options?: TryAcquireOptions): Promise<Lease | null>
  /** Acquires a permit, runs `fn` with it auto-extended, and releases it whatever happens. */
  withPermit<T>(fn: (permit: Lease) => Promise<T> | T, options?: AcquireOptions): Promise<T>
  /** Releases the permit held under `token` (a permit's `token`, kept elsewhere). */
  release(token: string): Promise<boolean>
  /** Pushes the expiry of the permit held under `token` to `ttl` ms from now. */
  extend(token: string, ttl?: number): Promise<boolean>
  /** The limit, the permits held (with their remaining ttl), the last fence, the waiters. */
  inspect(): Promise<SemaphoreInfo>
}

export const MAX_LIMIT = 1_000

const SEMAPHORE_OPTIONS = optionNames<SemaphoreOptions>('semaphore', { limit: true })

export function checkLimit(options: unknown): number {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new InvalidArgumentError(`Expected semaphore options to be an object { limit }, got ${describeValue(options)}`)
  checkOptions(options, SEMAPHORE_OPTIONS)
  const { limit } = options as { limit?: unknown }
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new InvalidArgumentError(`Expected \`limit\` to be an integer from 1 to ${MAX_LIMIT}, got ${describeValue(limit)}`)
  }
  return limit
}

/** The handle of `name`; `chain` answers nested acquisitions (see src/runtime/reentrancy.ts for the rules). */
export function semaphoreHandle(name: string, limit: number, ops: Operations<SemaphoreInfo>, chain: CallChain): Semaphore {
  return {
    name,
    limit,
    acquire: (options) => chain.answer('semaphore', name) ?? ops.acquire(name, options),
    tryAcquire: (options) => chain.answer('semaphore', name) ?? ops.tryAcquire(name, options),
    withPermit: async (fn, options) => {
      checkFunction(fn, 'fn')
      const reentered = chain.reenter('semaphore', name)
      if (reentered) return fn(reentered)
      return ops.withLock(name, (permit) => chain.run('semaphore', 'withPermit', [permit], () => fn(permit)), options)
    },
    release: (token) => ops.release(name, token),
    extend: (token, ttl) => ops.extend(name, token, ttl),
    inspect: () => ops.inspect(name),
  }
}
