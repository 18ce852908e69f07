import { InvalidArgumentError } from '../../errors/errors.js'
import type { Lease } from '../../runtime/lease.js'
import type { AcquireOptions, Operations, TryAcquireOptions } from '../../runtime/operations.js'
import { revokeEach } from '../../runtime/by-token.js'
import type { SemaphoreInfo } from './semaphore.js'
import type { CallChain } from '../../runtime/reentrancy.js'
import { checkBoolean, checkFunction, checkOptions, describeValue, optionNames } from '../../util/validate.js'

export type { PermitHolder, SemaphoreInfo } from './semaphore.js'

/** Options of a semaphore's `acquire` and `withPermit`: a lease's, and how many permits it takes. */
export interface PermitOptions extends AcquireOptions {
  /**
   * Permits this lease takes at once, all or none: an integer from 1 to the limit. Default: 1.
   * Waiting stays FIFO: a lease of n permits queued first gets the permits freed after it
   * queued before any newcomer does, so it is not starved by smaller requests behind it.
   */
  permits?: number
}

/** Options of a semaphore's `tryAcquire`: a single attempt's, and how many permits it takes. */
export interface TryPermitOptions extends TryAcquireOptions {
  /** Permits this lease takes at once, all or none: an integer from 1 to the limit. Default: 1. */
  permits?: number
}

/** Options of `locks.semaphore(name, options)`. */
export interface SemaphoreOptions {
  /** Permits that may be held at once, across every process: an integer from 1 to 1,000. */
  limit: number
  /**
   * `false`: a free permit goes to whoever asks first, the releaser asking again included, past
   * the waiters in line (woken by events as ever, never polling); but the waiter first in line is
   * passed at most 8 times (on a quorum of 3, at most 12 where the nodes' counts differ, 16 where
   * its place is on 2 nodes only), then the line goes first until that waiter is served, so no
   * waiter (of 1 permit or n) starves while it keeps its place. More permit-time used when permits
   * are held briefly, longer and less even waits. Decided per call: fair callers of the same
   * semaphore keep to the line.
   * Default: `true` (FIFO: a free permit goes to the waiter first in line).
   */
  fair?: boolean
}

/**
 * A counting semaphore: at most `limit` permits held at once across all processes. Each permit is
 * a `Lease` of its own (token, fence, deadline, signal, extend, release, `await using`) and
 * expires alone, by the Redis server's clock, if its holder dies. Waiting is event-driven and
 * FIFO, as for the mutex (with `fair: false`, a newcomer may pass the line a bounded number of times).
 */
export interface Semaphore {
  /** The name given to `locks.semaphore(name, ...)`. */
  readonly name: string
  /** Permits that may be held at once, across every process. */
  readonly limit: number
  /** False when made with `fair: false`. */
  readonly fair: boolean
  /** Waits (event-driven, at most `wait` ms) for a permit (or `permits` of them, one lease). */
  acquire(options?: PermitOptions): Promise<Lease>
  /** One attempt, never waits: a permit (or `permits`), or null when too few are free or others are ahead in line. */
  tryAcquire(options?: TryPermitOptions): Promise<Lease | null>
  /** Acquires a permit (or `permits`), runs `fn` with it auto-extended, and releases it whatever happens. */
  withPermit<T>(fn: (permit: Lease) => Promise<T> | T, options?: PermitOptions): Promise<T>
  /** Releases the permit (or permits) held under `token` (a lease's `token`, kept elsewhere). */
  release(token: string): Promise<boolean>
  /** Pushes the expiry of the permit held under `token` to `ttl` ms from now. */
  extend(token: string, ttl?: number): Promise<boolean>
  /** The limit, the permits held (with their remaining ttl), the last fence, the waiters. */
  inspect(): Promise<SemaphoreInfo>
  /**
   * Ends the permit held under `token` (without it: every permit `inspect` reads now) and tells
   * each holder at once: its signal aborts with `LockLostError`, reason `'revoked'` (see
   * `Locks.revoke`). Resolves with the tokens it ended.
   */
  revoke(token?: string): Promise<readonly string[]>
}

export const MAX_LIMIT = 1_000

const SEMAPHORE_OPTIONS = optionNames<SemaphoreOptions>('semaphore', { limit: true, fair: true })

/** `locks.semaphore`'s options, checked: the limit, and whether waiting is FIFO. */
export function checkSemaphoreOptions(options: unknown): { limit: number; fair: boolean } {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new InvalidArgumentError(`Expected semaphore options to be an object { limit, fair? }, got ${describeValue(options)}`)
  checkOptions(options, SEMAPHORE_OPTIONS)
  const { limit, fair } = options as { limit?: unknown; fair?: unknown }
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new InvalidArgumentError(`Expected \`limit\` to be an integer from 1 to ${MAX_LIMIT}, got ${describeValue(limit)}`)
  }
  return { limit, fair: fair === undefined ? true : checkBoolean(fair, 'fair') }
}

/** `permits` of a semaphore of `limit`: an integer from 1 to the limit. */
export function checkPermits(permits: unknown, limit: number): number {
  if (typeof permits !== 'number' || !Number.isInteger(permits) || permits < 1 || permits > limit) {
    throw new InvalidArgumentError(`Expected \`permits\` to be an integer from 1 to the limit ${limit}, got ${describeValue(permits)}`)
  }
  return permits
}

const ONE = [1, undefined] as const

/**
 * The permit count and the rest of the options. Options without `permits` go on as they are (the
 * 1-permit path allocates nothing more); anything but an object is left to the options check.
 */
function splitPermits<O extends { permits?: number }>(options: O | undefined, limit: number): readonly [number, Omit<O, 'permits'> | undefined] {
  if (options === undefined) return ONE
  if (typeof options !== 'object' || options === null || !('permits' in options)) return [1, options]
  const { permits, ...rest } = options
  return [permits === undefined ? 1 : checkPermits(permits, limit), rest]
}

/** `run` with the permit count and the other options; a bad count rejects (as every other bad option does). */
function withPermits<O extends { permits?: number }, T>(
  options: O | undefined,
  limit: number,
  run: (permits: number, rest: Omit<O, 'permits'> | undefined) => Promise<T>,
): Promise<T> {
  let split: readonly [number, Omit<O, 'permits'> | undefined]
  try {
    split = splitPermits(options, limit)
  } catch (err) {
    return Promise.reject(err)
  }
  return run(split[0], split[1])
}

/** How many permits a lease token names (`<token>@<slot>,<slot>,...`); 1 when it names none. */
function permitsOf(token: string): number {
  const slots = typeof token === 'string' ? token.slice(token.lastIndexOf('@') + 1) : ''
  return /^\d+(,\d+)*$/.test(slots) ? slots.split(',').length : 1
}

/**
 * The handle of `name`; `opsFor(n)` runs the leases of n permits (one `Operations` per count, so
 * that their waiter ids say how many permits each waits for); `chain` answers nested acquisitions
 * (see src/runtime/reentrancy.ts for the rules: a nested acquire gets the held lease, whatever
 * `permits` it names).
 */
export function semaphoreHandle(
  name: string,
  { limit, fair }: { limit: number; fair: boolean },
  opsFor: (permits: number) => Operations<SemaphoreInfo>,
  chain: CallChain,
): Semaphore {
  const one = opsFor(1)
  const ops = (permits: number) => (permits === 1 ? one : opsFor(permits))
  return {
    name,
    limit,
    fair,
    acquire: (options) => withPermits(options, limit, (permits, rest) => chain.answer('semaphore', name) ?? ops(permits).acquireLease(name, rest)),
    tryAcquire: (options) => withPermits(options, limit, (permits, rest) => chain.answer('semaphore', name) ?? ops(permits).tryAcquireLease(name, rest)),
    withPermit: async (fn, options) => {
      checkFunction(fn, 'fn')
      const [permits, rest] = splitPermits(options, limit)
      const reentered = chain.reenter('semaphore', name)
      if (reentered) return fn(reentered)
      return ops(permits).withLock(name, (permit) => chain.run('semaphore', 'withPermit', [permit], () => fn(permit)), rest)
    },
    release: (token) => ops(Math.min(permitsOf(token), limit)).release(name, token),
    extend: (token, ttl) => ops(Math.min(permitsOf(token), limit)).extend(name, token, ttl),
    revoke: async (token) => {
      const tokens = token !== undefined ? [token] : (await one.inspect(name)).permits.map((p) => p.token)
      return revokeEach(tokens, (t) => ops(Math.min(permitsOf(t), limit)).revoke(name, t))
    },
    inspect: () => one.inspect(name),
  }
}
