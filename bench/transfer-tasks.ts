// The worker side of scenarios T and R (bench/worker.ts hands these tasks over): one loop per
// process from the moment it is ready until `endAt`, counted from the shared `startAt` on.
import { Redis } from 'ioredis'
import { openPairLib, openRwLib, type PairSpec, type RwKind } from './transfer-libs.js'
import { clock, sleep } from './stats.js'
import { messagesReceived, uncounted, wireCount } from './wire.js'

export interface TransferTask {
  type: 'transfer-run'
  lib: PairSpec
  url: string
  /** Account keys; each transfer picks two distinct ones at random, in random order. */
  accounts: string[]
  startAt: number
  endAt: number
  ttl: number
}

export interface RwTask {
  type: 'rw-run'
  lib: RwKind
  url: string
  /** The lock's name; the protected value lives at `${name}:value`. */
  name: string
  /** Share of reads, 0..1. */
  readShare: number
  /** How long a section holds the lock beyond its GET (and SET), ms. */
  holdMs: number
  startAt: number
  endAt: number
  ttl: number
}

/** Counters of one process over [startAt, end of its loop]. */
interface Costs {
  wire: number
  cpuMs: number
  messages: number
  giveUps: number
  failedAcquires: number
  longestFailedWait: number
  errors: string[]
}

/** One transfer per entry, as parallel arrays (cheap over IPC). */
export interface TransferSections extends Costs {
  a: number[]
  b: number[]
  acquired: number[]
  releasing: number[]
  wait: number[]
  fenceA: (number | null)[]
  fenceB: (number | null)[]
}

export interface RwSections extends Costs {
  write: boolean[]
  acquired: number[]
  releasing: number[]
  wait: number[]
  fence: number[]
}

async function measured<T extends Costs>(startAt: number, out: T, loop: () => Promise<void>, giveUps: () => number): Promise<T> {
  const wait = Math.max(0, startAt - clock())
  let wire0 = wireCount()
  let messages0 = messagesReceived()
  let cpu0 = process.cpuUsage()
  let giveUps0 = giveUps()
  // The loop starts at once (warming up JIT, scripts, the pub/sub connection); the costs count from startAt.
  const timer = setTimeout(() => {
    wire0 = wireCount()
    messages0 = messagesReceived()
    cpu0 = process.cpuUsage()
    giveUps0 = giveUps()
  }, wait)
  await loop()
  clearTimeout(timer)
  out.wire = wireCount() - wire0
  out.messages = messagesReceived() - messages0
  const cpu = process.cpuUsage(cpu0)
  out.cpuMs = (cpu.user + cpu.system) / 1000
  out.giveUps = giveUps() - giveUps0
  return out
}

const costs = (): Costs => ({ wire: 0, cpuMs: 0, messages: 0, giveUps: 0, failedAcquires: 0, longestFailedWait: 0, errors: [] })

export async function transferRun(task: TransferTask): Promise<TransferSections> {
  const client = new Redis(task.url, { maxRetriesPerRequest: 2 })
  const data = uncounted(new Redis(task.url, { maxRetriesPerRequest: 2 }))
  const lib = openPairLib(task.lib, client)
  const out: TransferSections = { ...costs(), a: [], b: [], acquired: [], releasing: [], wait: [], fenceA: [], fenceB: [] }
  const n = task.accounts.length
  try {
    await measured(
      task.startAt,
      out,
      async () => {
        // Warm up from the start (the coordinator's startAt leaves time for every process to be ready).
        while (clock() < task.endAt) {
          const a = Math.floor(Math.random() * n)
          let b = Math.floor(Math.random() * (n - 1))
          if (b >= a) b++
          const amount = 1 + Math.floor(Math.random() * 50)
          const called = clock()
          try {
            const keyA = task.accounts[a]!
            const keyB = task.accounts[b]!
            // The protected work: a read-modify-write of both balances, correct only under both locks.
            // (The balances live beside the lock names: redlock locks the names themselves.)
            const r = await lib.transfer(keyA, keyB, task.ttl, Math.ceil(Math.max(5_000, task.endAt - called + 3_000)), async () => {
              const [x, y] = await Promise.all([data.get(`${keyA}:balance`), data.get(`${keyB}:balance`)])
              await Promise.all([data.set(`${keyA}:balance`, Number(x) - amount), data.set(`${keyB}:balance`, Number(y) + amount)])
            })
            out.a.push(a)
            out.b.push(b)
            out.acquired.push(r.acquired)
            out.releasing.push(r.releasing)
            out.wait.push(r.acquired - called)
            out.fenceA.push(r.fences[0])
            out.fenceB.push(r.fences[1])
          } catch (err) {
            out.failedAcquires++
            out.longestFailedWait = Math.max(out.longestFailedWait, clock() - called)
            if (out.errors.length < 5) out.errors.push(String(err))
          }
        }
      },
      () => lib.giveUps,
    )
  } finally {
    await lib.close()
    await Promise.all([client, data].map((c) => c.quit().catch(() => c.disconnect())))
  }
  return out
}

export async function rwRun(task: RwTask): Promise<RwSections> {
  const client = new Redis(task.url, { maxRetriesPerRequest: 2 })
  const data = uncounted(new Redis(task.url, { maxRetriesPerRequest: 2 }))
  const lib = openRwLib(task.lib, client, task.name)
  const key = `${task.name}:value`
  const out: RwSections = { ...costs(), write: [], acquired: [], releasing: [], wait: [], fence: [] }
  try {
    await measured(
      task.startAt,
      out,
      async () => {
        while (clock() < task.endAt) {
          const write = Math.random() >= task.readShare
          const called = clock()
          try {
            const lease = await lib.acquire(write ? 'write' : 'read', task.ttl, Math.ceil(Math.max(5_000, task.endAt - called + 3_000)))
            const acquired = clock()
            // A read looks at the value; a write increments it (lost increments show a broken exclusion).
            const value = Number(await data.get(key))
            await sleep(task.holdMs)
            if (write) await data.set(key, value + 1)
            const releasing = clock()
            await lease.release()
            out.write.push(write)
            out.acquired.push(acquired)
            out.releasing.push(releasing)
            out.wait.push(acquired - called)
            out.fence.push(lease.fence)
          } catch (err) {
            out.failedAcquires++
            out.longestFailedWait = Math.max(out.longestFailedWait, clock() - called)
            if (out.errors.length < 5) out.errors.push(String(err))
          }
        }
      },
      () => 0,
    )
  } finally {
    await lib.close()
    await Promise.all([client, data].map((c) => c.quit().catch(() => c.disconnect())))
  }
  return out
}
