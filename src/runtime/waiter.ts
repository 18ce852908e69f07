import type { WakeSource } from '../topology/backend.js'
import { MAX_TIMER_DELAY } from '../util/alarms.js'
import { attemptError } from '../errors/failures.js'
import type { WakeReason } from '../util/telemetry.js'
import type { LeaseState } from './lease-state.js'
import type { AcquireStats } from './events.js'

export type { AcquireStats } from './events.js'

/**
 * Result of one attempt on behalf of a waiter. After an error whose outcome is unknown (the
 * connection failed while the reply was owed), `token` is the token to try again with: if the
 * lost attempt did take the lock, the retry finds it held by that token and gets it back.
 */
export type TryResult =
  | { lease: LeaseState }
  | { retry: number; blocked?: unknown }
  /** `silent`: ms the attempt waited for a reply that never came (the client's offline queue, a paused or unreachable Redis). */
  | { error: unknown; permanent: boolean; token?: string; silent?: number }

/** One acquire's checked options, and what it decided before its first attempt. */
export interface AcquireCall {
  readonly resource: string
  readonly ttl: number
  readonly wait: number
  readonly signal: AbortSignal | undefined
  readonly autoExtend: boolean
  readonly maxHold: number
  /** `performance.now()` when it began. */
  readonly started: number
  /** Its waiter id (none when it may not wait). */
  readonly id: string | undefined
  readonly stats: AcquireStats | undefined
  /** When the first attempt stops waiting for its reply. */
  readonly deadline: number
}

/** An attempt unanswered for this long says Redis is in trouble, even when the wait deadline cut it short. */
export const TELLING_SILENCE_MS = 50

export interface Waiter {
  /** Its place in the fair queue in Redis; none for a caller that does not wait (`wait: 0`). */
  readonly id: string | undefined
  readonly resource: string
  readonly ttl: number
  readonly started: number
  readonly deadline: number
  readonly signal: AbortSignal | undefined
  /** Counted for telemetry, only while someone listens. */
  readonly stats?: AcquireStats | undefined
  /** May have joined the queue in Redis (an attempt was sent for it), so it must leave when it gives up. */
  queued: boolean
  settled: boolean
  lastError: unknown
  /** Consecutive failed attempts (Redis errors), for the retry backoff. */
  failures: number
  /** Token for the next attempt when the last one's outcome is unknown (see TryResult). */
  retryToken: string | undefined
  /** Set while this waiter is on standby behind a woken one (see #standby). */
  standby: NodeJS.Timeout | undefined
  resolve(lease: LeaseState): void
  reject(err: unknown): void
  wake: (() => void) | undefined
  /** What woke it last (a message, a resync, a standby timer), until its next attempt reads it. */
  woken: WakeReason | undefined
  timers: NodeJS.Timeout[]
  /** Stops listening to `signal` (set once armed). */
  unlistenAbort: (() => void) | undefined
}

/** What the waiting needs from its owner (one per primitive backend). */
export interface WaitHooks {
  readonly wake: WakeSource
  /** A queue is about to listen to its channels (the pub/sub connection opens only then). */
  subscribing(): void
  /**
   * Shared by every primitive's waiting of one instance: `ever` is set when the first of them
   * listens to a wake-up channel. Each of the instance's channels ends in its id, so until then
   * none is subscribed, and a fast path has nothing to ask the subscriber.
   */
  readonly listened: { ever: boolean }
  /** The wake-up channels of a resource for this instance (several for an all-or-nothing lock of several resources). */
  channels(resource: string): readonly string[]
  /** One attempt for `waiter` (joining the Redis queue under `waiter.id` when it fails). */
  attempt(waiter: Waiter): Promise<TryResult>
  /** Gives up the waiter's place in Redis; errors are ignored (its place expires anyway). */
  leave(waiter: Waiter): void
  /** Throws if the instance or the client was closed. */
  checkOpen(): void
  /** How long a woken waiter keeps its place in Redis unless it comes (ms). */
  readonly grace: number
}

/** A new waiter: not queued, not settled, no timers yet. */
export function newWaiter(init: Pick<Waiter, 'id' | 'resource' | 'ttl' | 'started' | 'deadline' | 'signal' | 'stats' | 'resolve' | 'reject'>): Waiter {
  // Field by field: `{ ...init, queued: false, ... }` took V8 28 µs per waiter, this 0.3 µs.
  return {
    id: init.id,
    resource: init.resource,
    ttl: init.ttl,
    started: init.started,
    deadline: init.deadline,
    signal: init.signal,
    stats: init.stats,
    resolve: init.resolve,
    reject: init.reject,
    queued: false,
    settled: false,
    lastError: undefined,
    failures: 0,
    retryToken: undefined,
    standby: undefined,
    wake: undefined,
    woken: undefined,
    timers: [],
    unlistenAbort: undefined,
  }
}

/** A wake-up subscription: active (no message on its channels is missed from `since` on), or failed. */
export type Subscription = { readonly failed: false; readonly since: number } | { readonly failed: true }

export const FAILED: Subscription = { failed: true }
export const activeSince = (since: number): Subscription => ({ failed: false, since })

/** What `untilWoken` resolves to when the waiter was woken (or its time ran out) first. */
export const WOKEN: unique symbol = Symbol('woken')

/** `subscription`, unless the waiter is woken first (settled, message, resync) or `ms` pass: then WOKEN. */
export function untilWoken(waiter: Waiter, subscription: Promise<Subscription>, ms: number): Promise<Subscription | typeof WOKEN> {
  return new Promise((resolve) => {
    const wake = () => finish(WOKEN)
    const finish = (value: Subscription | typeof WOKEN) => {
      clearTimeout(timer)
      // Only our own wake function: once woken, the waiter may already sleep with another one,
      // and a late SUBSCRIBE acknowledgement clearing that would drop the next release message.
      if (waiter.wake === wake) waiter.wake = undefined
      resolve(value)
    }
    const timer = setTimeout(wake, Math.min(MAX_TIMER_DELAY, Math.max(0, Math.ceil(ms))))
    waiter.wake = wake
    subscription.then(finish)
  })
}

/** Sleeps `ms`, unless the waiter is woken first (its `wake` is this sleep's end meanwhile). */
export function sleepUnlessWoken(waiter: Waiter, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(), Math.min(MAX_TIMER_DELAY, Math.max(0, Math.ceil(ms))))
    const done = () => {
      clearTimeout(timer)
      if (waiter.wake === done) waiter.wake = undefined
      resolve()
    }
    waiter.wake = done
  })
}

const backoff = (waiter: Waiter): number => Math.min(1_000, 25 * 2 ** Math.min(6, waiter.failures))

/**
 * What a waiter does after an attempt that got no lease: how long until it looks again, or the
 * error it ends with (a refusal that retrying cannot cure). Records what the caller must hear if
 * the wait runs out: the Redis error, the reason it was kept out, or nothing (contention).
 */
export function afterRefusal(waiter: Waiter, result: Exclude<TryResult, { lease: LeaseState }>): { delay: number } | { error: unknown } {
  waiter.retryToken = 'error' in result ? result.token : undefined
  if ('error' in result) {
    // An attempt cut short by the wait deadline right after it was sent says nothing about Redis
    // (each attempt's reply is awaited no later than the deadline); one that went unanswered
    // for a while does: the wait then ends in RedisError, not in a timeout that reads as contention.
    // A more specific earlier error (a quorum's votes) is kept over a last silent attempt.
    const telling = (result.silent ?? 0) >= TELLING_SILENCE_MS && waiter.lastError === undefined
    if (result.permanent || performance.now() < waiter.deadline - 2 || telling) waiter.lastError = result.error
    waiter.failures++
    if (result.permanent) return { error: attemptError(waiter.resource, result) }
    return { delay: backoff(waiter) }
  }
  // Kept out by something other than a holder (quorum nodes that do not count yet): if the
  // wait ends now, that is what the caller must hear.
  waiter.lastError = result.blocked
  waiter.failures = 0
  waiter.queued = true
  return { delay: result.retry + 1 }
}
