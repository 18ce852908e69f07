// The worker side of scenario L (renewals at scale): one process acquires `n` auto-extended leases
// on distinct resources, holds them for a few renewal periods while the coordinator counts Redis
// commands, measures its event-loop delay and heap, checks every lease is still held, releases.
// Run in a fresh `node --expose-gc` worker per library.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { Redis } from 'ioredis'
import Redlock5 from 'redlock5'
import { Mutex } from 'redis-semaphore'
import type { Lease } from '../src/index.js'
import { fencelock } from './library.js'
import { clock, sleep } from './stats.js'
import { wireCount } from './wire.js'

/** The libraries that renew a lease by themselves. */
export type RenewKind = 'fencelock' | 'redlock5' | 'semaphore'

export const RENEW_LABELS: Record<RenewKind, string> = {
  fencelock: 'fencelock acquire({ autoExtend: true })',
  redlock5: 'redlock 5.0-beta using() (extends 500 ms before expiry)',
  semaphore: 'redis-semaphore Mutex (refreshInterval: its default, 0.8 x ttl)',
}

/** Each library's nominal renewal period for a lease of `ttl` ms (from its documentation or source). */
export function renewPeriod(kind: RenewKind, ttl: number): number {
  if (kind === 'fencelock') return ttl / 3 // "every ttl/3" (AcquireOptions.autoExtend)
  if (kind === 'redlock5') return ttl - 500 // using(): extends automaticExtensionThreshold (500 ms) before expiry
  return ttl * 0.8 // redis-semaphore: refreshInterval defaults to 0.8 x lockTimeout
}

export type RenewTask =
  | { type: 'renew-start'; lib: RenewKind; url: string; n: number; ttl: number; concurrency: number; prefix: string }
  | { type: 'renew-hold'; ms: number }
  | { type: 'renew-finish' }

interface Holding {
  /** True while the library still says the lease is held (not lost, not expired). */
  held(): boolean
  release(): Promise<unknown>
}

interface Session {
  client: Redis
  n: number
  heapBefore: number
  leases: Holding[]
  lost: { n: number }
  close(): Promise<void>
}

let session: Session | undefined

const gc = (): (() => void) => {
  const fn = (globalThis as { gc?: () => void }).gc
  if (!fn) throw new Error('the renewal tasks need node --expose-gc')
  return fn
}

async function settledHeap(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    await sleep(20)
    gc()()
  }
  return process.memoryUsage().heapUsed
}

/** One library's way of taking a lease that renews itself until released. */
function opener(kind: RenewKind, client: Redis, ttl: number, lost: { n: number }): { take(name: string): Promise<Holding>; close(): Promise<void> } {
  switch (kind) {
    case 'fencelock': {
      const locks = fencelock.createLocks({ redis: client })
      return {
        async take(name) {
          const lease: Lease = await locks.acquire(name, { ttl, wait: 10_000, autoExtend: true })
          lease.signal.addEventListener('abort', () => lost.n++, { once: true })
          return { held: () => lease.held && !lease.signal.aborted, release: () => lease.release() }
        },
        close: () => locks.close(),
      }
    }
    case 'redlock5': {
      const redlock = new Redlock5([client], { retryCount: 0 })
      redlock.on('error', () => {})
      return {
        take: (name) =>
          new Promise<Holding>((resolve, reject) => {
            let done!: () => void
            const finished = new Promise<void>((r) => (done = r))
            let aborted = false
            const running = redlock.using([name], ttl, async (signal) => {
              signal.addEventListener('abort', () => {
                aborted = true
                lost.n++
              })
              resolve({
                held: () => !aborted,
                release: () => {
                  done()
                  return running
                },
              })
              await finished
            })
            running.catch(reject)
          }),
        close: async () => {},
      }
    }
    case 'semaphore':
      return {
        async take(name) {
          let gone = false
          const mutex = new Mutex(client, name, {
            lockTimeout: ttl,
            acquireTimeout: 10_000,
            onLockLost: () => {
              gone = true
              lost.n++
            },
          })
          await mutex.acquire()
          return { held: () => mutex.isAcquired && !gone, release: () => mutex.release() }
        },
        close: async () => {},
      }
  }
}

async function renewStart(task: Extract<RenewTask, { type: 'renew-start' }>) {
  const client = new Redis(task.url, { lazyConnect: true, maxRetriesPerRequest: 2 })
  await client.connect()
  const lost = { n: 0 }
  const lib = opener(task.lib, client, task.ttl, lost)
  // Warm up (scripts loaded, JIT) on other names before the baseline.
  for (let i = 0; i < 50; i++) {
    const held = await lib.take(`${task.prefix}:warm:${i}`)
    await held.release()
  }
  const heapBefore = await settledHeap()
  const leases: Holding[] = []
  const began = clock()
  let next = 0
  const errors: string[] = []
  await Promise.all(
    Array.from({ length: task.concurrency }, async () => {
      while (next < task.n) {
        const i = next++
        try {
          leases.push(await lib.take(`${task.prefix}:${i}`))
        } catch (err) {
          if (errors.length < 3) errors.push(String(err))
        }
      }
    }),
  )
  session = { client, n: task.n, heapBefore, leases, lost, close: () => lib.close() }
  return { acquired: leases.length, acquireSeconds: (clock() - began) / 1000, errors }
}

/**
 * The histogram records the whole interval between its timer's ticks (an idle process shows p50 =
 * the resolution, measured: 1.12 ms at 1, 5.14 at 5, 20.2 at 20), so the delay is that minus the
 * resolution.
 */
const LOOP_RESOLUTION_MS = 5
const late = (ns: number) => Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS)

async function renewHold(task: Extract<RenewTask, { type: 'renew-hold' }>) {
  const s = session
  if (!s) throw new Error('renew-hold before renew-start')
  const delay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS })
  const wire0 = wireCount()
  const cpu0 = process.cpuUsage()
  const began = clock()
  delay.enable()
  await sleep(task.ms)
  delay.disable()
  const seconds = (clock() - began) / 1000
  const wire = wireCount() - wire0
  const cpu = process.cpuUsage(cpu0)
  const held = s.leases.filter((l) => l.held()).length
  const heapAfter = await settledHeap()
  return {
    seconds,
    wire,
    cpuMs: (cpu.user + cpu.system) / 1000,
    loopDelayP50: late(delay.percentile(50)),
    loopDelayP99: late(delay.percentile(99)),
    loopDelayMax: late(delay.max),
    heapPerLease: (heapAfter - s.heapBefore) / Math.max(1, s.leases.length),
    held,
    lost: s.lost.n,
  }
}

async function renewFinish() {
  const s = session
  if (!s) throw new Error('renew-finish before renew-start')
  session = undefined
  const began = clock()
  let released = 0
  const errors: string[] = []
  for (let i = 0; i < s.leases.length; i += 500) {
    const batch = await Promise.allSettled(s.leases.slice(i, i + 500).map((l) => l.release()))
    for (const r of batch) {
      if (r.status === 'fulfilled') released++
      else if (errors.length < 3) errors.push(String(r.reason))
    }
  }
  await s.close()
  await s.client.quit().catch(() => s.client.disconnect())
  return { released, releaseSeconds: (clock() - began) / 1000, errors }
}

export async function renewTask(task: RenewTask): Promise<unknown> {
  switch (task.type) {
    case 'renew-start':
      return renewStart(task)
    case 'renew-hold':
      return renewHold(task)
    case 'renew-finish':
      return renewFinish()
  }
}
