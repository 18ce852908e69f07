// D: what waiting costs: 8 waiters in one process while another client holds the lock.
import { Redis } from 'ioredis'
import { chosen, CONTENDED, isTuned, type Config } from './bench-config.js'
import { libLabel, openLib, type LibKind } from './libs.js'
import type { Pool } from './pool.js'
import { counters, delta, type Server } from './redis.js'
import { sleep } from './stats.js'

const log = (line: string) => process.stderr.write(`${line}\n`)

export interface IdleRow {
  lib: LibKind
  label: string
  tuned: boolean
  seconds: number
  waiters: number
  /** INFO commandstats delta while the 8 waiters wait (includes redis.call()s inside scripts). */
  redisCommands: number
  /** Commands the waiting process sent. */
  wireCommands: number
  waiterCpuMs: number
  redisCpuMs: number
  giveUps: number
}

export async function idleWaitingCost(pool: Pool, server: Server, cfg: Config): Promise<IdleRow[]> {
  const [w] = await pool.take(1)
  const holderClient = new Redis(server.url)
  const rows: IdleRow[] = []
  try {
    for (const lib of chosen(cfg, CONTENDED)) {
      const key = `d:${lib.kind}:${lib.retry ?? 'd'}`
      const holderLib = openLib(lib, [holderClient])
      const holder = await holderLib.acquire(key, 60_000, 5_000)
      await sleep(50)
      const before = await counters(server)
      await w!.run({ type: 'idle-start', lib, urls: [server.url], key, waiters: 8, ttl: 10_000 })
      await sleep(cfg.idleMs)
      const snap = await w!.run<{ cpuMs: number; wire: number; giveUps: number }>({ type: 'idle-snapshot' })
      const used = delta(await counters(server), before)
      await holder.release()
      await w!.run({ type: 'idle-finish' })
      await holderLib.close()
      await server.admin.flushall()
      const row: IdleRow = {
        lib: lib.kind,
        label: libLabel(lib),
        tuned: isTuned(lib),
        seconds: cfg.idleMs / 1000,
        waiters: 8,
        redisCommands: used.commands,
        wireCommands: snap.wire,
        waiterCpuMs: snap.cpuMs,
        redisCpuMs: used.cpuMs,
        giveUps: snap.giveUps,
      }
      log(`  D ${row.label}: ${row.redisCommands} Redis commands, waiter CPU ${row.waiterCpuMs.toFixed(0)} ms, Redis CPU ${row.redisCpuMs.toFixed(0)} ms`)
      rows.push(row)
    }
  } finally {
    await holderClient.quit().catch(() => holderClient.disconnect())
  }
  return rows
}
