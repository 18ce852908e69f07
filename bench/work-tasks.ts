// The worker side of "S at work" (bench/semaphore-work.ts): one process opens its semaphore, takes
// a permit (or `permits` of them), holds it around a timer of `holdMs` (simulated work that leaves
// the CPU free, as I/O would), gives it back and asks again at once, until the shared end time.
import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import { MultiSemaphore, Semaphore } from 'redis-semaphore'
import { fencelock } from './library.js'
import type { LibSpec } from './libs.js'
import { clock, sleep } from './stats.js'
import { closeClients, connect } from './worker-clients.js'

/** A library of S at work; fencelock with `fair: false` is a row of its own. */
export type WorkLib = LibSpec & { fair?: false }

export type WorkTask =
  | { type: 'work-open'; lib: WorkLib; url: string; name: string; limit: number; permits: number }
  | { type: 'work-run'; holdMs: number; startAt: number; endAt: number }

/** One process's permit-holding intervals (shared clock, ms), as parallel arrays. */
export interface WorkSections {
  acquired: number[]
  /** Work done, release about to be sent. */
  releasing: number[]
  /** Release answered. */
  released: number[]
  /** From the acquire call to its resolution. */
  wait: number[]
  /** fencelock: when the last wake-up message for this process arrived during the acquire (null: none). */
  woken: (number | null)[]
  /** CPU (user+system) of this process over the run, ms. */
  cpuMs: number
  failedAcquires: number
  longestFailedWait: number
  errors: string[]
}

interface WorkSemaphore {
  acquire: (ttl: number, wait: number) => Promise<() => Promise<unknown>>
  close: () => Promise<void>
  /** fencelock: the arrival times of the wake-up messages for this process, once `watch` ran. */
  wakes?: number[]
  watch?: () => Promise<void>
}

const SEED_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"

/**
 * The seed article's SET NX loop made a pool of `limit` slots (one key each): try the slots in
 * turn, sleep the seed's 100 ms (or `retry`) when all are taken. One permit per acquire only.
 */
function seedSlots(spec: LibSpec, redis: Redis, name: string, limit: number): WorkSemaphore {
  const retry = spec.retry ?? 100
  const start = Math.floor(Math.random() * limit)
  return {
    async acquire(ttl, wait) {
      const token = randomUUID()
      const deadline = clock() + wait
      for (;;) {
        for (let i = 0; i < limit; i++) {
          const key = `${name}:slot:${(start + i) % limit}`
          if ((await redis.set(key, token, 'PX', ttl, 'NX')) === 'OK') return () => redis.eval(SEED_RELEASE, 1, key, token)
        }
        if (clock() >= deadline) throw new Error(`seed slots: gave up on ${name}`)
        await sleep(retry)
      }
    },
    close: async () => {},
  }
}

/**
 * Timing only (the library is untouched): learns this process's instance id from a probe wake-up
 * on a semaphore of its own, then records when each wake-up message for it arrives, on a
 * subscriber connection of the bench's own, in the same process as the library's subscriber.
 */
async function watchWakes(locks: ReturnType<typeof fencelock.createLocks>, sub: Redis, name: string, wakes: number[]): Promise<void> {
  const probe = locks.semaphore(`probe:${process.pid}:${name}`, { limit: 1 })
  const seen = new Promise<string>((resolve) => sub.once('pmessage', (_p, channel: string) => resolve(channel)))
  await sub.psubscribe(`*{probe:${process.pid}:${name}}:S:W:*`)
  const first = await probe.acquire({ ttl: 10_000 })
  const second = probe.acquire({ ttl: 10_000, wait: 10_000 })
  await sleep(20)
  await first.release()
  await (await second).release()
  const instance = (await seen).split(':').pop() ?? ''
  await sub.punsubscribe()
  sub.on('message', (_channel: string, body: string) => {
    if (body.startsWith(`${instance}:`)) wakes.push(clock())
  })
  await sub.subscribe(`fencelock:{${name}}:S:W:${instance}`)
}

function openWork(spec: WorkLib, redis: Redis, name: string, limit: number, permits: number): WorkSemaphore {
  if (spec.kind === 'fencelock') {
    const locks = fencelock.createLocks({ redis })
    const pool = locks.semaphore(name, spec.fair === false ? { limit, fair: false } : { limit })
    const wakes: number[] = []
    const sub = redis.duplicate()
    return {
      async acquire(ttl, wait) {
        const lease = await pool.acquire(permits === 1 ? { ttl, wait } : { ttl, wait, permits })
        return () => lease.release()
      },
      close: async () => {
        sub.disconnect()
        await locks.close()
      },
      wakes,
      watch: () => watchWakes(locks, sub, name, wakes),
    }
  }
  if (spec.kind === 'seed') return seedSlots(spec, redis, name, limit)
  return {
    async acquire(ttl, wait) {
      const options = { lockTimeout: ttl, acquireTimeout: Math.min(wait, 10_000), ...(spec.retry !== undefined ? { retryInterval: spec.retry } : {}) }
      const s = permits === 1 ? new Semaphore(redis, name, limit, options) : new MultiSemaphore(redis, name, limit, permits, options)
      await s.acquire()
      return () => s.release()
    },
    close: async () => {},
  }
}

let open: WorkSemaphore | undefined

export async function workOpen(task: Extract<WorkTask, { type: 'work-open' }>): Promise<object> {
  const [redis] = await connect([task.url])
  if (!redis) throw new Error('work-open: no Redis client')
  open = openWork(task.lib, redis, task.name, task.limit, task.permits)
  await open.watch?.()
  // Warm-up before the shared start (scripts loaded, subscriber connected): one permit, no work.
  await open.acquire(10_000, 30_000).then((release) => release())
  return {}
}

/** The last wake-up that arrived in (from, to], or null. */
function wokenIn(wakes: number[] | undefined, from: number, to: number): number | null {
  if (!wakes) return null
  for (let i = wakes.length - 1; i >= 0; i--) {
    const t = wakes[i]!
    if (t <= to) return t > from ? t : null
  }
  return null
}

export async function workRun(task: Extract<WorkTask, { type: 'work-run' }>): Promise<WorkSections> {
  const sem = open
  if (!sem) throw new Error('work-run before work-open')
  const out: WorkSections = { acquired: [], releasing: [], released: [], wait: [], woken: [], cpuMs: 0, failedAcquires: 0, longestFailedWait: 0, errors: [] }
  await sleep(Math.max(0, task.startAt - clock()))
  const cpu0 = process.cpuUsage()
  while (clock() < task.endAt) {
    const called = clock()
    let release: () => Promise<unknown>
    try {
      release = await sem.acquire(10_000, Math.ceil(Math.max(5_000, task.endAt - called + 3_000)))
    } catch (err) {
      out.failedAcquires++
      out.longestFailedWait = Math.max(out.longestFailedWait, clock() - called)
      if (out.errors.length < 3) out.errors.push(String(err))
      // An acquire refused at once (a bad argument) must not spin a core of a shared machine.
      await sleep(1)
      continue
    }
    const acquired = clock()
    out.woken.push(wokenIn(sem.wakes, called, acquired))
    await sleep(task.holdMs)
    const releasing = clock()
    await release()
    out.acquired.push(acquired)
    out.releasing.push(releasing)
    out.released.push(clock())
    out.wait.push(acquired - called)
  }
  const cpu = process.cpuUsage(cpu0)
  out.cpuMs = (cpu.user + cpu.system) / 1000
  await sem.close()
  open = undefined
  await closeClients()
  return out
}
