// S: fencelock's semaphore beside redis-semaphore's: 16 processes contending for 4 permits, then
// 16 waiters idle while another client holds every permit.
import { Redis } from 'ioredis'
import { chosen, type Config } from './bench-config.js'
import type { LibSpec } from './libs.js'
import type { Pool } from './pool.js'
import { counters, delta, type Server } from './redis.js'
import { analyseSemaphore, type SemaphoreRow } from './semaphore-analysis.js'
import { openSemaphore } from './semaphore-libs.js'
import { clock, sleep } from './stats.js'
import type { Sections } from './worker.js'

/** Scenario S: fencelock's semaphore beside redis-semaphore's `Semaphore` at its defaults. */
export const SEMAPHORES: LibSpec[] = [{ kind: 'fencelock' }, { kind: 'semaphore' }]
export const S_LIMIT = 4
export const S_PROCS = 16

const log = (line: string) => process.stderr.write(`${line}\n`)

export async function semaphoreContendedAndIdle(pool: Pool, server: Server, cfg: Config): Promise<SemaphoreRow[]> {
  const rows: SemaphoreRow[] = []
  for (const lib of chosen(cfg, SEMAPHORES)) {
    const contended = await semaphoreContend(pool, server, lib, { procs: S_PROCS, limit: S_LIMIT, ms: cfg.contendMs, name: `s:${lib.kind}` })
    const idle = await semaphoreIdle(pool, server, lib, { procs: S_PROCS, limit: S_LIMIT, ms: cfg.idleMs, name: `s:${lib.kind}:idle` })
    const row = { ...contended, idle }
    log(
      `  S tight loop, ${row.label}: ${Math.round(row.permitsPerSec)} permits/s, ${Math.round(row.handoffsPerSec)} handed over/s, gap p50 ${row.gapP50.toFixed(2)} ms, fairness ${row.fairness.toFixed(2)}, idle ${idle.redisCommands} Redis commands, violations ${row.violations}`,
    )
    rows.push(row)
  }
  await pool.shrink(8)
  return rows
}

async function semaphoreContend(
  pool: Pool,
  server: Server,
  lib: LibSpec,
  opts: { procs: number; limit: number; ms: number; name: string },
): Promise<Omit<SemaphoreRow, 'idle'>> {
  const workers = await pool.take(opts.procs)
  const semaphore = { name: opts.name, limit: opts.limit }
  await Promise.all(workers.map((w) => w.run({ type: 'contend-open', lib, urls: [server.url], semaphore })))
  const warmAt = clock() + 100
  const warm = await Promise.all(
    workers.map((w) => w.run<{ errors: string[] }>({ type: 'contend-warm', key: opts.name, concurrency: 1, startAt: warmAt, ttl: 10_000 })),
  )
  const insideKey = `${opts.name}:inside`
  const before = await counters(server)
  const startAt = clock() + 250
  const endAt = startAt + opts.ms
  const parts = await Promise.all(
    workers.map((w, i) =>
      w.run<Sections>({ type: 'contend-run', key: opts.name, counterKey: insideKey, concurrency: 1, startAt, endAt, ttl: 10_000, worker: i, inside: true }),
    ),
  )
  const used = delta(await counters(server), before)
  await server.admin.flushall()
  const row = analyseSemaphore(lib, opts, parts, used, startAt, endAt)
  row.errors.unshift(...warm.flatMap((x) => x.errors))
  return row
}

/** Another client holds every permit; one waiter in each of `procs` processes waits `ms`. */
async function semaphoreIdle(
  pool: Pool,
  server: Server,
  lib: LibSpec,
  opts: { procs: number; limit: number; ms: number; name: string },
): Promise<SemaphoreRow['idle']> {
  const workers = await pool.take(opts.procs)
  const holderClient = new Redis(server.url)
  const holderLib = openSemaphore(lib, [holderClient], opts.name, opts.limit)
  try {
    const held = await Promise.all(Array.from({ length: opts.limit }, () => holderLib.acquire(opts.name, 60_000, 5_000)))
    await sleep(50)
    const before = await counters(server)
    const began = clock()
    await Promise.all(
      workers.map((w) =>
        w.run({ type: 'idle-start', lib, urls: [server.url], key: opts.name, waiters: 1, ttl: 10_000, semaphore: { name: opts.name, limit: opts.limit } }),
      ),
    )
    // By then every waiter has made its first attempt and joined the queue (or is polling).
    const parkedAfter = Math.min(500, opts.ms / 4)
    await sleep(began + parkedAfter - clock())
    const parked = await counters(server)
    const parkedAt = clock()
    await sleep(began + opts.ms - clock())
    const snaps = await Promise.all(workers.map((w) => w.run<{ cpuMs: number; wire: number; giveUps: number }>({ type: 'idle-snapshot' })))
    const after = await counters(server)
    const parkedSeconds = (clock() - parkedAt) / 1000
    const used = delta(after, before)
    await Promise.all(held.map((h) => h.release()))
    await Promise.all(workers.map((w) => w.run({ type: 'idle-finish' })))
    await server.admin.flushall()
    return {
      seconds: opts.ms / 1000,
      waiters: opts.procs,
      redisCommands: used.commands,
      parkedCommands: delta(after, parked).commands,
      parkedSeconds,
      wireCommands: snaps.reduce((a, x) => a + x.wire, 0),
      waiterCpuMs: snaps.reduce((a, x) => a + x.cpuMs, 0),
      redisCpuMs: used.cpuMs,
      giveUps: snaps.reduce((a, x) => a + x.giveUps, 0),
    }
  } finally {
    await holderLib.close()
    await holderClient.quit().catch(() => holderClient.disconnect())
  }
}
