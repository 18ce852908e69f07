import { channel as nodeChannel } from 'node:diagnostics_channel'
import type { LockLostReason } from '../errors/errors.js'

/** The primitive an event is about: `read` and `write` are the two sides of a read/write lock, `multi` an `acquireAll`. */
export type LockKind = 'mutex' | 'semaphore' | 'read' | 'write' | 'multi' | 'election'

/**
 * Why a waiting acquire sent its next attempt: `release` (a release named it as next in line),
 * `standby` (the waiter woken before it did not come in time), `resync` (the wake-up connection
 * reconnected and messages may have been missed), `subscribed` (its wake-up channel became active
 * after its attempt was sent), `turn` (an earlier acquire of this process for the resource ended),
 * `recheck` (the re-check timer, bounded by the holder's remaining ttl, ran out: a crashed holder
 * or a lost message) or `backoff` (a retry after a Redis error).
 */
export type WakeReason = 'release' | 'standby' | 'resync' | 'subscribed' | 'turn' | 'recheck' | 'backoff'

/** `fencelock:acquire:start`: an acquisition (`acquire`, `tryAcquire`, `withLock`, a permit, a read or write lease) begins. */
export interface AcquireStartEvent {
  /** The primitive: `mutex`, `semaphore`, `read`, `write` or `multi`. */
  readonly kind: LockKind
  /** The resource name (a semaphore's or read/write lock's name; for `multi`, the names as one string). */
  readonly resource: string
  /** The ttl asked for, in ms; undefined when the instance's default applies. */
  readonly ttl: number | undefined
  /** The wait asked for, in ms (0 for tryAcquire); undefined when the instance's default applies. */
  readonly wait: number | undefined
}

/** `fencelock:acquire`: that acquisition ended. */
export interface AcquireEvent {
  /** The primitive: `mutex`, `semaphore`, `read`, `write` or `multi`. */
  readonly kind: LockKind
  /** The resource name (a semaphore's or read/write lock's name; for `multi`, the names as one string). */
  readonly resource: string
  /** `busy`: tryAcquire got null; `timeout`: the wait ran out; `aborted`: the caller's signal fired. */
  readonly outcome: 'acquired' | 'busy' | 'timeout' | 'aborted' | 'error'
  /** Time from the call until it settled, in ms. */
  readonly waitedMs: number
  /** When the call started: epoch ms on the process's monotonic clock (`performance.timeOrigin + performance.now()`). */
  readonly startedAt: number
  /** Attempts sent to Redis. */
  readonly attempts: number
  /** Whether the first attempt found the lock taken (or another acquire of this process ahead). */
  readonly contended: boolean
  /** Why each attempt after waiting was sent, in order (empty when it never waited). */
  readonly wakes: readonly WakeReason[]
  /** The lease's token, when acquired. */
  readonly token?: string
  /** The lease's fence, when acquired. */
  readonly fence?: number
  /** The error the call rejected with, for `timeout`, `aborted` and `error`. */
  readonly error?: unknown
}

/** `fencelock:extend`: an extension (automatic or `lease.extend`) ended. */
export interface ExtendEvent {
  /** The primitive: `mutex`, `semaphore`, `read`, `write` or `multi`. */
  readonly kind: LockKind
  /** The resource name (a semaphore's or read/write lock's name; for `multi`, the names as one string). */
  readonly resource: string
  /** The lease's token. */
  readonly token: string
  /** The ttl asked for, in ms. */
  readonly ttl: number
  /** `lost`: Redis said the lease no longer holds the lock. */
  readonly outcome: 'extended' | 'lost' | 'error'
  /** The error, for `error`. */
  readonly error?: unknown
}

/** `fencelock:lost`: a lease was lost; its signal aborts with `LockLostError` of the same `reason`. */
export interface LostEvent {
  /** The primitive: `mutex`, `semaphore`, `read`, `write` or `multi`. */
  readonly kind: LockKind
  /** The resource name (a semaphore's or read/write lock's name; for `multi`, the names as one string). */
  readonly resource: string
  /** The lease's token. */
  readonly token: string
  /** The lease's fence. */
  readonly fence: number
  /** Why: `expired`, `refused`, `unreachable`, `closed` or `revoked` (as the `LockLostError`). */
  readonly reason: LockLostReason
  /** Time since the lease was acquired, in ms. */
  readonly heldMs: number
  /** When the attempt that got the lease started: epoch ms, as `AcquireEvent.startedAt`. */
  readonly acquiredAt: number
}

/**
 * `fencelock:at-risk`: an extension of a lease that is still held failed (Redis did not answer,
 * the connection failed, WAIT fell short): the lease ends at its deadline unless a later extension
 * succeeds. Once per failed extension, before the lease is lost (see `Lease.onAtRisk`).
 */
export interface AtRiskEvent {
  /** The primitive: `mutex`, `semaphore`, `read`, `write` or `multi`. */
  readonly kind: LockKind
  /** The resource name (a semaphore's or read/write lock's name; for `multi`, the names as one string). */
  readonly resource: string
  /** The lease's token. */
  readonly token: string
  /** The lease's fence. */
  readonly fence: number
  /** Validity left when the extension failed, in ms (`lease.remaining`). */
  readonly remainingMs: number
  /** Why the extension failed (a `RedisError` whose `cause` is the client's error). */
  readonly error: unknown
}

/** `fencelock:release`: a lease was released. */
export interface ReleaseEvent {
  /** The primitive: `mutex`, `semaphore`, `read`, `write` or `multi`. */
  readonly kind: LockKind
  /** The resource name (a semaphore's or read/write lock's name; for `multi`, the names as one string). */
  readonly resource: string
  /** The lease's token. */
  readonly token: string
  /** The lease's fence. */
  readonly fence: number
  /** False when the lock was already gone (the lease was lost before). */
  readonly released: boolean
  /** Time since the lease was acquired, in ms. */
  readonly heldMs: number
  /** When the attempt that got the lease started: epoch ms, as `AcquireEvent.startedAt`. */
  readonly acquiredAt: number
}

/** `fencelock:fenced-write`: `fencedSet` or `claimFence` ran. */
export interface FencedWriteEvent {
  /** The data key written or claimed. */
  readonly key: string
  /** The lease's fence. */
  readonly fence: number
  /** False for a stale fence: the write or claim was refused. */
  readonly accepted: boolean
  /** Which guard ran. */
  readonly operation: 'fencedSet' | 'claimFence'
}

/** The payload of each channel, by channel name (for `diagnostics_channel.subscribe(name, ...)`). */
export interface TelemetryEvents {
  /** See {@link AcquireStartEvent}. */
  'fencelock:acquire:start': AcquireStartEvent
  /** See {@link AcquireEvent}. */
  'fencelock:acquire': AcquireEvent
  /** See {@link ExtendEvent}. */
  'fencelock:extend': ExtendEvent
  /** See {@link LostEvent}. */
  'fencelock:lost': LostEvent
  /** See {@link ReleaseEvent}. */
  'fencelock:release': ReleaseEvent
  /** See {@link AtRiskEvent}. */
  'fencelock:at-risk': AtRiskEvent
  /** See {@link FencedWriteEvent}. */
  'fencelock:fenced-write': FencedWriteEvent
}

/**
 * One `node:diagnostics_channel` channel whose messages are `T` (the channel object itself, typed
 * here so the declarations need no Node types).
 */
export interface TelemetryChannel<T> {
  /** The channel's name, e.g. `fencelock:lost`. */
  readonly name: string
  /** True while anyone listens: only then are messages built and published. */
  readonly hasSubscribers: boolean
  /** Calls `listener` with every message published from now on (synchronously, in the publishing call: keep it quick, never throw). */
  subscribe(listener: (message: T, name: string | symbol) => void): void
  /** Stops calling `listener`; true if it was subscribed. */
  unsubscribe(listener: (message: T, name: string | symbol) => void): boolean
}

/** The channel objects, exported as `telemetry`. */
export interface Telemetry {
  /** `fencelock:acquire:start`: an acquisition (`acquire`, `tryAcquire`, `withLock`, a permit, a read or write lease) begins. */
  readonly acquireStart: TelemetryChannel<AcquireStartEvent>
  /** `fencelock:acquire`: that acquisition ended: acquired (with token and fence), busy (`tryAcquire` got null), timed out, aborted or failed. */
  readonly acquire: TelemetryChannel<AcquireEvent>
  /** `fencelock:extend`: an extension (automatic or `lease.extend`) ended: extended, lost or failed. */
  readonly extend: TelemetryChannel<ExtendEvent>
  /** `fencelock:lost`: a lease was lost; its signal aborts with `LockLostError` of the same `reason`. */
  readonly lost: TelemetryChannel<LostEvent>
  /** `fencelock:release`: a lease was released; `released` is false when it was already gone. */
  readonly release: TelemetryChannel<ReleaseEvent>
  /** `fencelock:at-risk`: an extension of a held lease failed; it ends at its deadline unless a later one succeeds. */
  readonly atRisk: TelemetryChannel<AtRiskEvent>
  /** `fencelock:fenced-write`: `fencedSet` or `claimFence` ran; `accepted` is false for a stale fence. */
  readonly fencedWrite: TelemetryChannel<FencedWriteEvent>
}

/** A channel as the library holds it: named by its key in `TelemetryEvents`, which fixes its payload type. */
interface Publishing<K extends keyof TelemetryEvents> extends TelemetryChannel<TelemetryEvents[K]> {
  readonly name: K
  publish(message: TelemetryEvents[K]): void
}

const channel = <K extends keyof TelemetryEvents>(name: K) => nodeChannel(name) as unknown as Publishing<K>

/**
 * Events on `node:diagnostics_channel`, as undici publishes `undici:request:create`. Nothing is
 * built or sent unless someone subscribes (`hasSubscribers` is checked first): no cost otherwise.
 * The payload of each is its `TelemetryEvents` type; the README's table lists them.
 */
export const events = {
  acquireStart: channel('fencelock:acquire:start'),
  acquire: channel('fencelock:acquire'),
  extend: channel('fencelock:extend'),
  lost: channel('fencelock:lost'),
  release: channel('fencelock:release'),
  atRisk: channel('fencelock:at-risk'),
  fencedWrite: channel('fencelock:fenced-write'),
} as const

/** The channels as users see them: typed payloads, no `publish`. */
export const telemetry: Telemetry = events

/**
 * Publishes `message()` on `event` if anyone listens; the message is only built then. Generic in
 * the channel's name, not its payload: a payload type parameter would be inferred from `message`
 * too, widening its literals (`outcome: 'lost'` to string).
 */
export function emit<K extends keyof TelemetryEvents>(event: Publishing<K>, message: () => TelemetryEvents[K]): void {
  if (event.hasSubscribers) event.publish(message())
}
