import type { Lease } from './lease.js'
import type { AcquireOptions, Operations, TryAcquireOptions } from './operations.js'
import type { ReadWriteInfo } from './primitives/rw-lock.js'

export type { ReadWriteInfo } from './primitives/rw-lock.js'

/**
 * A read/write lock: many readers or one writer. A waiting writer keeps new readers out (no writer
 * starvation); a writer's release wakes every reader at the head of the line at once. Each read
 * or write lease is a `Lease` of its own that expires alone if its holder dies; readers and writers
 * share one fence counter, so a writer's fence is larger than any earlier reader's or writer's.
 */
export interface ReadWriteLock {
  readonly name: string
  read(options?: AcquireOptions): Promise<Lease>
  write(options?: AcquireOptions): Promise<Lease>
  tryRead(options?: TryAcquireOptions): Promise<Lease | null>
  tryWrite(options?: TryAcquireOptions): Promise<Lease | null>
  withRead<T>(fn: (lease: Lease) => Promise<T> | T, options?: AcquireOptions): Promise<T>
  withWrite<T>(fn: (lease: Lease) => Promise<T> | T, options?: AcquireOptions): Promise<T>
  /** The writer, the readers (with their remaining ttl), the last fence, the waiters. */
  inspect(): Promise<ReadWriteInfo>
}

export function readWriteHandle(name: string, read: Operations<ReadWriteInfo>, write: Operations<ReadWriteInfo>): ReadWriteLock {
  return {
    name,
    read: (options) => read.acquire(name, options),
    write: (options) => write.acquire(name, options),
    tryRead: (options) => read.tryAcquire(name, options),
    tryWrite: (options) => write.tryAcquire(name, options),
    withRead: (fn, options) => read.withLock(name, fn, options),
    withWrite: (fn, options) => write.withLock(name, fn, options),
    inspect: () => read.inspect(name),
  }
}
