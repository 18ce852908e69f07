/**
 * `fencelock/redis-semaphore`: redis-semaphore 5's API (the one-line switch: change the import),
 * in its key layout, so that old and upgraded processes exclude each other during a rolling
 * upgrade; plus `fence` and `signal` on every lock. See docs/migration.md, "From redis-semaphore".
 *
 * ```ts
 * import { Mutex, Semaphore } from 'fencelock/redis-semaphore' // was: from 'redis-semaphore'
 * ```
 *
 * @packageDocumentation
 * @module fencelock/redis-semaphore
 */
export { Mutex, Semaphore, MultiSemaphore, RedlockMutex, RedlockSemaphore, RedlockMultiSemaphore, type RedisSemaphoreClient } from './classes.js'
export { LostLockError, TimeoutError } from './errors.js'
export { defaultTimeoutOptions, type LockLostCallback, type LockOptions, type TimeoutOptions } from './lock.js'
