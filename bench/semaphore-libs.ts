// The semaphores of scenario S behind the LockLib shape: fencelock's semaphore and
// redis-semaphore's `Semaphore`, so that the contended and idle tasks drive them like a lock.
import type { Redis } from 'ioredis'
import { Semaphore } from 'redis-semaphore'
import type { Lease } from '../src/index.js'
import { fencelock } from './library.js'
import { retrying, type LibKind, type LibSpec, type LockLib } from './libs.js'

/** The libraries of scenario S: fencelock's semaphore and redis-semaphore's `Semaphore`. */
export type SemaphoreKind = Extract<LibKind, 'fencelock' | 'semaphore'>

export function semaphoreLabel(spec: LibSpec): string {
  if (spec.kind === 'fencelock') return 'fencelock semaphore'
  return spec.retry === undefined ? 'redis-semaphore Semaphore (defaults: 10 ms)' : `redis-semaphore Semaphore (retry ${spec.retry} ms)`
}

/**
 * Opens the semaphore `name` with `limit` permits, as a LockLib whose `acquire` takes a permit (its
 * `key` argument is ignored), so that the contended and idle tasks drive it like a lock.
 */
export function openSemaphore(spec: LibSpec, clients: Redis[], name: string, limit: number): LockLib {
  const label = semaphoreLabel(spec)
  const first = clients[0]
  if (!first) throw new Error('openSemaphore: no Redis client')
  switch (spec.kind) {
    case 'fencelock': {
      const locks = fencelock.createLocks({ redis: first })
      const pool = locks.semaphore(name, { limit })
      return {
        label,
        giveUps: 0,
        async acquire(_key, ttl, wait) {
          const permit: Lease = await pool.acquire({ ttl, wait })
          return { fence: permit.fence, release: () => permit.release() }
        },
        close: () => locks.close(),
      }
    }
    case 'semaphore': {
      const lib: LockLib = {
        label,
        giveUps: 0,
        acquire: (_key, ttl, wait) =>
          retrying(lib, name, wait, async () => {
            // As for its Mutex: acquireTimeout its default (10 s) unless the caller's budget is shorter.
            const options = { lockTimeout: ttl, acquireTimeout: Math.min(wait, 10_000), ...(spec.retry !== undefined ? { retryInterval: spec.retry } : {}) }
            const semaphore = new Semaphore(first, name, limit, options)
            await semaphore.acquire()
            return { fence: undefined, release: () => semaphore.release() }
          }),
        close: async () => {},
      }
      return lib
    }
    default:
      throw new Error(`openSemaphore: no semaphore adapter for ${spec.kind}`)
  }
}
