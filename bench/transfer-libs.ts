// Adapters of scenarios T (transfers: two accounts locked at once) and R (read-heavy: a read/write
// lock against a mutex), in the shape of libs.ts: acquire as the library waits, release.
import type { Redis } from 'ioredis'
import Redlock5 from 'redlock5'
import type { Lease } from '../src/index.js'
import { fencelock } from './library.js'
import { AcquireTimeout } from './libs.js'
import { clock } from './stats.js'

/**
 * T's ways to lock two accounts: fencelock's `withLocks` (all or nothing), two fencelock mutexes
 * taken one by one in sorted order, and redlock 5's multi-resource lock (`acquire([a, b], ttl)`).
 */
export type PairKind = 'fencelock-multi' | 'fencelock-sorted' | 'redlock5'

export interface PairSpec {
  kind: PairKind
  /** redlock5 only: retry delay in ms; undefined = its defaults (200±100 ms x 10). */
  retry?: number
}

export function pairLabel(spec: PairSpec): string {
  switch (spec.kind) {
    case 'fencelock-multi':
      return 'fencelock withLocks([a, b])'
    case 'fencelock-sorted':
      return 'fencelock, two mutexes in sorted order'
    case 'redlock5':
      return spec.retry === undefined
        ? 'redlock 5.0-beta acquire([a, b]) (defaults: 200±100 ms ×10)'
        : `redlock 5.0-beta acquire([a, b]) (retry ${spec.retry} ms)`
  }
}

export interface PairLib {
  readonly label: string
  /**
   * Locks accounts `a` and `b` (in the order given), runs `work`, releases; resolves with the
   * moments the locks were held and released-to-be, and each account's fence (null: no fences).
   */
  transfer(
    a: string,
    b: string,
    ttl: number,
    wait: number,
    work: () => Promise<void>,
  ): Promise<{ acquired: number; releasing: number; fences: [number | null, number | null] }>
  giveUps: number
  close(): Promise<void>
}

export function openPairLib(spec: PairSpec, client: Redis): PairLib {
  const label = pairLabel(spec)
  switch (spec.kind) {
    case 'fencelock-multi': {
      const locks = fencelock.createLocks({ redis: client })
      return {
        label,
        giveUps: 0,
        async transfer(a, b, ttl, wait, work) {
          let acquired = 0
          let releasing = 0
          let fences: [number | null, number | null] = [null, null]
          await locks.withLocks(
            [a, b],
            async (lease) => {
              acquired = clock()
              fences = [lease.fences[a] ?? null, lease.fences[b] ?? null]
              await work()
              releasing = clock()
            },
            { ttl, wait },
          )
          return { acquired, releasing, fences }
        },
        close: () => locks.close(),
      }
    }
    case 'fencelock-sorted': {
      const locks = fencelock.createLocks({ redis: client })
      return {
        label,
        giveUps: 0,
        async transfer(a, b, ttl, wait, work) {
          // The classic way to avoid a deadlock: every caller takes the two locks in one global order.
          const [first, second] = a < b ? [a, b] : [b, a]
          const started = clock()
          const one: Lease = await locks.acquire(first, { ttl, wait })
          let two: Lease
          try {
            two = await locks.acquire(second, { ttl, wait: Math.max(0, Math.floor(wait - (clock() - started))) })
          } catch (err) {
            await one.release()
            throw err
          }
          const acquired = clock()
          let releasing = 0
          try {
            await work()
          } finally {
            releasing = clock()
            await Promise.all([one.release(), two.release()])
          }
          return { acquired, releasing, fences: first === a ? [one.fence, two.fence] : [two.fence, one.fence] }
        },
        close: () => locks.close(),
      }
    }
    case 'redlock5': {
      const delay = spec.retry
      const redlock = new Redlock5(
        [client],
        delay === undefined ? {} : { retryCount: Math.round(2_000 / delay), retryDelay: delay, retryJitter: Math.floor(delay / 2) },
      )
      redlock.on('error', () => {})
      const lib: PairLib = {
        label,
        giveUps: 0,
        async transfer(a, b, ttl, wait, work) {
          const deadline = clock() + wait
          let lock: Awaited<ReturnType<typeof redlock.acquire>>
          for (;;) {
            try {
              lock = await redlock.acquire([a, b], ttl)
              break
            } catch (err) {
              lib.giveUps++
              if (clock() >= deadline) throw new AcquireTimeout(`gave up on ${a}, ${b} after ${wait} ms: ${(err as Error).message}`)
            }
          }
          const acquired = clock()
          await work()
          const releasing = clock()
          await lock.release()
          return { acquired, releasing, fences: [null, null] }
        },
        close: async () => {},
      }
      return lib
    }
  }
}

/** R: a read/write lock, or a mutex that readers and writers alike must take. */
export type RwKind = 'fencelock-rw' | 'fencelock-mutex'

export const rwLabel = (kind: RwKind): string => (kind === 'fencelock-rw' ? 'fencelock readWrite (read / write)' : 'fencelock mutex (acquire for both)')

export interface RwLib {
  readonly label: string
  acquire(mode: 'read' | 'write', ttl: number, wait: number): Promise<Lease>
  close(): Promise<void>
}

export function openRwLib(kind: RwKind, client: Redis, name: string): RwLib {
  const locks = fencelock.createLocks({ redis: client })
  const rw = locks.readWrite(name)
  return {
    label: rwLabel(kind),
    acquire: (mode, ttl, wait) =>
      kind === 'fencelock-mutex' ? locks.acquire(name, { ttl, wait }) : mode === 'read' ? rw.read({ ttl, wait }) : rw.write({ ttl, wait }),
    close: () => locks.close(),
  }
}
