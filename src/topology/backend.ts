import type { FencelockError } from '../errors/errors.js'
import type { Into } from '../util/into.js'

/**
 * Outcome of one acquisition attempt. `blocked`: nobody holds the lock, yet it could not be
 * granted (quorum nodes that do not count yet); a caller that gives up reports this error.
 */
export type Attempt =
  /** `token`: the lease's token (a semaphore's permit names its slot in it). */
  | { readonly acquired: true; readonly fence: number; readonly token: string }
  /** `retry`: ms until trying again is worth it (the holder's remaining ttl, or the waiter ahead's). */
  | { readonly acquired: false; readonly retry: number; readonly blocked?: FencelockError }

/**
 * Who holds a lease and since when, as Redis records it beside the lease's token (for a mutex, a
 * semaphore's permit, a reader or the writer of a read/write lock, an election's leader, each
 * lock of an all-or-nothing lease). The times are the Redis server's clock (`TIME`), in ms since
 * the epoch: compare them with each other, or read them as dates; they decide nothing. Each is
 * null where nothing is recorded: nobody holds the lock, or its value is a bare token (the drop-in
 * `fencelock/redlock` entry keeps node-redlock's key layout, which records nothing else).
 */
export interface HolderInfo {
  /** The label of the instance that holds it (`createLocks`' `holder` option, default `hostname:pid`), or null. */
  readonly holder: string | null
  /**
   * When it was granted (server time, ms since the epoch), or null. In quorum mode the earliest
   * grant among the nodes that hold it for the majority.
   */
  readonly since: number | null
  /**
   * When it was last extended (server time, ms since the epoch): `since` until its first
   * extension; null where `since` is. In quorum mode the time by which a majority of nodes had
   * extended it (the majority-th latest), as `ttl` is how long a majority still holds it.
   */
  readonly lastExtended: number | null
}

/** What `locks.inspect(resource)` reports; `holder`, `since` and `lastExtended` are the holder's (see `HolderInfo`). */
export interface LockInfo extends HolderInfo {
  /** The resource's name, as given. */
  readonly resource: string
  /** True while some lease holds the lock. */
  readonly held: boolean
  /** The holder's token, or null when free. */
  readonly token: string | null
  /**
   * The last fence handed out for this resource (on one Redis: the holder's, while held), or null
   * if none is kept. In quorum mode, the largest fence any node has recorded: at least the
   * holder's, and possibly larger (a node that granted late, or granted a failed attempt, proposed
   * its own larger fence), since the nodes do not record which fence the quorum settled on.
   */
  readonly fence: number | null
  /** Remaining ttl of the holder's lock in ms, or null when free. */
  readonly ttl: number | null
  /** Waiters queued in Redis for this resource (one per waiting process and resource). */
  readonly waiters: number
}

/** Where wake-ups come from: one shared pub/sub connection (or one per node in quorum mode). */
export interface WakeSource {
  retain(): void
  release(): Promise<void>
  /** Resolves with the performance.now() from which on no message on `channel` is missed. */
  listen(channel: string, listener: (message: string) => void): Promise<number>
  unlisten(channel: string, listener: (message: string) => void): void
  /** True while `channel` is subscribed and acknowledged (listening to it costs no round trip). */
  isActive?(channel: string): boolean
  /** False while no channel is subscribed or being subscribed: `isActive` is then false for every channel. */
  hasChannels?(): boolean
  onResync(listener: () => void): () => void
}

/**
 * Where a locks instance hears that one of its leases was revoked (revoke-notice.lua publishes the
 * lease's token): the shared pub/sub connection, or every node's in quorum mode (the first copy
 * is enough: a revoked lease was ended by a release that answered).
 */
export interface NoticeSource {
  /** Resolves with the performance.now() from which on no message on `channel` is missed. */
  listen(channel: string, listener: (message: string) => void): Promise<number>
  unlisten(channel: string, listener: (message: string) => void): void
}

/**
 * One primitive on one topology, as the runtime sees it (built by src/topology/*.ts from a
 * primitive of src/primitives/). The waiting, renewing and lease logic live once in the runtime.
 */
export interface Backend<Info = LockInfo> {
  /** Longest ttl callers may request. */
  readonly maxTtl: number
  readonly wake: WakeSource
  isClosed(): boolean
  /** Why the client gets no reply, where it said so (its last 'error' since it was ready); absent in quorum mode, whose votes say it per node. */
  clientError?(): Error | undefined
  /**
   * One atomic attempt; `waiter` ('' for none) joins the fair queue when the attempt fails. Its
   * outcome is handed to `into` (value or error, once), no promise made for it: the hot path of
   * every acquire.
   */
  attempt(resource: string, token: string, ttl: number, waiter: string, into: Into<Attempt>): void
  /**
   * True when extended, false when Redis says this lease no longer holds the lock. Rejects with
   * `LockLostError` when the lease is lost for another reason that is already certain (a quorum
   * that a majority of nodes did not answer: `unreachable`), with any other error when it may
   * still be extended before its deadline.
   */
  extend(resource: string, token: string, ttl: number): Promise<boolean>
  /**
   * `extend` for several leases whose `batchKey` is equal, in one call: one answer per lease, in
   * order (true, false, or the error that lease's own `extend` would have thrown). A failure of the
   * call itself rejects. Absent: each lease is extended on its own (see renewals.ts).
   */
  readonly extendMany?:
    | ((leases: readonly { readonly resource: string; readonly token: string; readonly ttl: number }[]) => Promise<readonly (boolean | FencelockError)[]>)
    | undefined
  /** Leases with equal keys may share an `extendMany` call (a Redis Cluster slot; one key for one node). */
  readonly batchKey?: ((resource: string) => number) | undefined
  /**
   * Releases `token`'s lock: true (to `into`) if it released it, false if that token no longer held
   * it. No promise made for it: the hot path of every release.
   */
  release(resource: string, token: string, into: Into<boolean>): void
  /** A waiter gives up its place in the queue (and wakes the next one if the lock is free). */
  leave(resource: string, waiter: string): Promise<void>
  inspect(resource: string): Promise<Info>
  /** The pub/sub channel prefixes of a resource (an all-or-nothing lock of several: one per resource). */
  channel(resource: string): readonly string[]
  /** Where revocation notices for this instance's leases are heard (see `announce`). */
  readonly notices: NoticeSource
  /**
   * Publishes `token` on `channel` (revoke-notice.lua), after a revoke ended its lease: on the one
   * Redis (any node of a cluster: a PUBLISH reaches them all), or on every node of a quorum,
   * resolving once one published it. Rejects if none could.
   */
  announce(channel: string, token: string): Promise<void>
}
