import { optionNames } from '../util/validate.js'

/** Options of every acquire, and the instance's defaults for them. */

export interface Defaults {
  ttl: number
  wait: number
  driftFactor: number
  /** How long a waiter keeps its place in the Redis queue past its next re-check (ms). */
  waiterGrace: number
  /** Lease ttls below the floor (100 ms) are accepted. */
  allowShortTtl: boolean
  /** How long tryAcquire waits for Redis' answer (ms). */
  tryTimeout: number
  /** Automatic extension stops this long after the acquire (ms; Infinity: never). */
  maxHold: number
}

/**
 * Options of one acquisition that may wait: `locks.acquire`, `withLock`, `acquireAll`,
 * `withLocks`, and the semaphore's and read/write lock's waiting calls. Each one left out takes the
 * instance's default (see `LocksOptions`).
 */
export interface AcquireOptions {
  /** Lease ttl in ms. Default: the instance's `ttl`. */
  ttl?: number
  /** How long to wait in ms (`Infinity` to wait forever). Default: the instance's `wait`. */
  wait?: number
  /** Aborts the wait with `LockAbortedError`. */
  signal?: AbortSignal
  /** Keep extending the lease (every ttl/3) until released. Default: false (true in `withLock`). */
  autoExtend?: boolean
  /**
   * Automatic extension stops this long after the acquire (ms), so a holder that hangs with its
   * event loop alive cannot keep the lock forever: the lease then ends at its deadline (signal
   * aborts with reason `'expired'`), at most one ttl later. `Infinity`: never. Default: the
   * instance's `maxHold` (off).
   */
  maxHold?: number
}

/**
 * Options of one attempt that never waits for the lock: `locks.tryAcquire`, `semaphore.tryAcquire`,
 * `tryRead`, `tryWrite`. Each one left out takes the instance's default.
 */
export interface TryAcquireOptions {
  /** Lease ttl in ms. Default: the instance's `ttl`. */
  ttl?: number
  /** Keep extending the lease (every ttl/3) until released. Default: false. */
  autoExtend?: boolean
  /** How long to wait for Redis' answer in ms. Default: the instance's `tryTimeout` (2 s). */
  timeout?: number
  /** As `AcquireOptions.maxHold`. */
  maxHold?: number
}

/**
 * Acquire options the library passes on (withLock, withLocks, a campaign, each lock of an ordered
 * acquireAll): every field present, `undefined` where left out, which acquire reads as left out.
 * Written field by field: V8 builds `{ ...options, autoExtend }` through a slow generic path
 * (about 1 µs against 0.15), on every call.
 */
export function acquireOptionsOf(
  ttl: number | undefined,
  wait: number | undefined,
  signal: AbortSignal | undefined,
  autoExtend: boolean | undefined,
  maxHold: number | undefined,
): AcquireOptions {
  return { ttl, wait, signal, autoExtend, maxHold } as AcquireOptions
}

/** `options` (already checked) with `autoExtend` defaulting to `extend`. */
export const withAutoExtend = (options: AcquireOptions, extend: boolean): AcquireOptions =>
  acquireOptionsOf(options.ttl, options.wait, options.signal, options.autoExtend ?? extend, options.maxHold)

/** The names `checkOptions` accepts in each (a new option added above must be listed here: tsc checks it). */
export const ACQUIRE_OPTIONS = optionNames<AcquireOptions>(
  'acquire',
  { ttl: true, wait: true, signal: true, autoExtend: true, maxHold: true },
  { timeout: 'did you mean `wait` (how long to wait for the lock, in ms)?' },
)

const NEVER_WAITS = 'a try (tryAcquire, tryRead, tryWrite) never waits for the lock; to wait, use acquire, read or write with { wait }'

export const TRY_ACQUIRE_OPTIONS = optionNames<TryAcquireOptions>(
  'tryAcquire',
  { ttl: true, autoExtend: true, timeout: true, maxHold: true },
  { wait: NEVER_WAITS, signal: `${NEVER_WAITS} (no signal needed: \`timeout\` bounds the wait for Redis' answer)` },
)
