// @ts-nocheck: type-checked by test/types.test.ts against the built package (this line removed), not by the repository's tsconfig
// A consumer of fencelock/redis-semaphore: the redis-semaphore API, the one import changed. Checked
// as ESM (`import` resolves dist/redis-semaphore.d.ts) and, copied to redis-semaphore.cts by the
// test, as CommonJS (`require` resolves dist/redis-semaphore.d.cts).
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import {
  defaultTimeoutOptions,
  type LockOptions,
  type LostLockError,
  MultiSemaphore,
  Mutex,
  RedlockMultiSemaphore,
  RedlockMutex,
  RedlockSemaphore,
  Semaphore,
  TimeoutError,
} from 'fencelock/redis-semaphore'

export async function main(url: string): Promise<number | undefined> {
  const redis = new Redis(url)
  const node = await createClient({ url }).connect()
  const options: LockOptions = { ...defaultTimeoutOptions, onLockLost: (err: LostLockError) => console.error(err.message) }
  const mutex = new Mutex(redis, 'key', options)
  await mutex.acquire(AbortSignal.timeout(1_000)).catch((err: unknown) => {
    if (err instanceof TimeoutError) console.error(err.message)
    throw err
  })
  const fence: number | undefined = mutex.fence
  const signal: AbortSignal = mutex.signal
  const acquired: boolean = await new Semaphore(node, 'key', 3).tryAcquire()
  await new MultiSemaphore(redis, 'key', 3, 2, { lockTimeout: 5_000 }).release()
  for (const lock of [new RedlockMutex([redis], 'k'), new RedlockSemaphore([redis], 'k', 2), new RedlockMultiSemaphore([redis], 'k', 3, 2)]) lock.stopRefresh()
  const id: string = mutex.identifier
  const held: boolean = mutex.isAcquired
  console.log(id, held, acquired, signal.aborted)
  await mutex.release()
  return fence
}
