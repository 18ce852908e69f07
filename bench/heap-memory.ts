// F: heap bytes per held lease and per waiter, each measured in a fresh process.
import { chosen, SINGLE, type Config } from './bench-config.js'
import { libLabel, type LibKind } from './libs.js'
import { Worker } from './pool.js'
import type { Server } from './redis.js'
import { sleep } from './stats.js'

const log = (line: string) => process.stderr.write(`${line}\n`)

export interface MemoryRow {
  lib: LibKind
  label: string
  n: number
  heldBytes: number
  waiterBytes: number
}

export async function heapMemory(server: Server, cfg: Config): Promise<MemoryRow[]> {
  const rows: MemoryRow[] = []
  for (const lib of chosen(cfg, SINGLE)) {
    const result: Partial<Record<'held' | 'waiter', number>> = {}
    for (const what of ['held', 'waiter'] as const) {
      // A fresh process each time: waiters of the polling libraries cannot be cancelled.
      const w = new Worker({ exposeGc: true })
      try {
        const r = await w.run<{ bytes: number }>({ type: 'memory', lib, urls: [server.url], n: cfg.memoryN, what, prefix: `f:${lib.kind}` })
        result[what] = r.bytes
      } finally {
        w.kill()
      }
      await sleep(100)
      await server.admin.flushall()
    }
    const row = { lib: lib.kind, label: libLabel(lib), n: cfg.memoryN, heldBytes: result.held ?? Number.NaN, waiterBytes: result.waiter ?? Number.NaN }
    log(`  F ${row.label}: ${Math.round(row.heldBytes)} B/held lease, ${Math.round(row.waiterBytes)} B/waiter`)
    rows.push(row)
  }
  return rows
}
