// The only change to the vendored suite: its tests import the library from here, and RS_TARGET
// picks which one runs: `original` (redis-semaphore, as published) or `drop-in` (fencelock's
// fencelock/redis-semaphore, the built dist/redis-semaphore.cjs of this repository).
/* eslint-disable @typescript-eslint/no-require-imports */
const drop = process.env.RS_TARGET === 'drop-in'
const impl = drop ? require('../../../dist/redis-semaphore.cjs') : require('redis-semaphore')

export const Mutex = impl.Mutex
export const Semaphore = impl.Semaphore
export const MultiSemaphore = impl.MultiSemaphore
export const RedlockMutex = impl.RedlockMutex
export const RedlockSemaphore = impl.RedlockSemaphore
export const RedlockMultiSemaphore = impl.RedlockMultiSemaphore
export const LostLockError = impl.LostLockError
export const TimeoutError = impl.TimeoutError
export const defaultTimeoutOptions = impl.defaultTimeoutOptions
export type { LockOptions, TimeoutOptions } from 'redis-semaphore'
