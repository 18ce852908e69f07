import type { Lease } from '../../runtime/lease.js'
import type { AcquireOptions, Operations, TryAcquireOptions } from '../../runtime/operations.js'
import { revokeEach } from '../../runtime/by-token.js'
import type { ReadWriteInfo } from './rw-lock.js'
import type { CallChain } from '../../runtime/reentrancy.js'
import { checkFunction } from '../../util/validate.js'

export type { ReadWriteHolder, ReadWriteInfo } from './rw-lock.js'

/**
 * A read/write lock: many readers or one writer. A waiting writer keeps new readers out (no writer
 * starvation); a writer's release wakes every reader at the head of the line at once. Each read
 * or write lease is a `Lease` of its own that expires alone if its holder dies; readers and writers
 * share one fence counter, so a writer's fence is larger than any earlier reader's or writer's.
 */
export interface ReadWriteLock {
  /** The name given to `locks.readWrite(name)`. */
  readonly name: string
  /** Waits (event-driven, FIFO, at most `wait` ms) for a read lease: shared with other readers, never with a writer. */
  read(options?: AcquireOptions): Promise<Lease>
  /** Waits (event-driven, FIFO, at most `wait` ms) for the write lease: no reader and no other writer holds it meanwhile. */
  write(options?: AcquireOptions): Promise<Lease>
  /** One attempt, never waits: a read lease, or null when a writer holds the lock or others are ahead in line. */
  tryRead(options?: TryAcquireOptions): Promise<Lease | null>
  /** One attempt, never waits: the write lease, or null when anyone holds the lock or others are ahead in line. */
  tryWrite(options?: TryAcquireOptions): Promise<Lease | null>
  /** Takes a read lease, runs `fn` with it auto-extended, and releases it whatever happens (as `locks.withLock`). */
  withRead<T>(fn: (lease: Lease) => Promise<T> | T, options?: AcquireOptions): Promise<T>
  /** Takes the write lease, runs `fn` with it auto-extended, and releases it whatever happens (as `locks.withLock`). */
  withWrite<T>(fn: (lease: Lease) => Promise<T> | T, options?: AcquireOptions): Promise<T>
  /**
   * Releases the read or write lease held under `token` (a lease's `token`, kept elsewhere, or read
   * with `inspect`): true if this call released it, false if that token holds neither side.
   */
  release(token: string): Promise<boolean>
  /**
   * Pushes the expiry of the read or write lease held under `token` to `ttl` ms from now (default:
   * the instance's ttl): true if extended, false if that token holds neither side.
   */
  extend(token: string, ttl?: number): Promise<boolean>
  /** The writer, the readers (with their remaining ttl), the last fence, the waiters. */
  inspect(): Promise<ReadWriteInfo>
  /**
   * Ends the lease held under `token` (without it: the writer and every reader `inspect` reads
   * now) and tells each holder at once: its signal aborts with `LockLostError`, reason
   * `'revoked'` (see `Locks.revoke`). Resolves with the tokens it ended.
   */
  revoke(token?: string): Promise<readonly string[]>
}

/** The handle of `name`; `chain` answers nested acquisitions (see src/runtime/reentrancy.ts for the rules). */
export function readWriteHandle(name: string, read: Operations<ReadWriteInfo>, write: Operations<ReadWriteInfo>, chain: CallChain): ReadWriteLock {
  const within = async <T>(
    side: 'read' | 'write',
    ops: Operations<ReadWriteInfo>,
    fn: (lease: Lease) => Promise<T> | T,
    options?: AcquireOptions,
  ): Promise<T> => {
    checkFunction(fn, 'fn')
    const reentered = chain.reenter(side, name)
    if (reentered) return fn(reentered)
    return ops.withLock(name, (lease) => chain.run(side, side === 'read' ? 'withRead' : 'withWrite', [lease], () => fn(lease)), options)
  }
  return {
    name,
    read: (options) => chain.answer('read', name) ?? read.acquireLease(name, options),
    write: (options) => chain.answer('write', name) ?? write.acquireLease(name, options),
    tryRead: (options) => chain.answer('read', name) ?? read.tryAcquireLease(name, options),
    tryWrite: (options) => chain.answer('write', name) ?? write.tryAcquireLease(name, options),
    withRead: (fn, options) => within('read', read, fn, options),
    withWrite: (fn, options) => within('write', write, fn, options),
    // A token holds one side or none: the write side is tried first (one compare in Redis), then the read side.
    release: async (token) => (await write.release(name, token)) || read.release(name, token),
    extend: async (token, ttl) => (await write.extend(name, token, ttl)) || read.extend(name, token, ttl),
    inspect: () => read.inspect(name),
    revoke: async (token) => {
      const info = token === undefined ? await read.inspect(name) : undefined
      const tokens = info ? [...(info.writer ? [info.writer.token] : []), ...info.readers.map((r) => r.token)] : [token!]
      return revokeEach(tokens, async (t) => (await write.revoke(name, t)) || read.revoke(name, t))
    },
  }
}
