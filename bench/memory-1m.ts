// `npm run bench -- --memory-1m`: fencelock's Redis memory per resource over 1,000,000 resources
// locked once each. Too long for every run, so it is run on its own; its result is kept in
// bench/results/memory-1m.json and shown as a dated section of docs/evidence/benchmark.md, which every
// full run carries over.
import { existsSync, readFileSync } from 'node:fs'
import os from 'node:os'
import { redisMemory, type MemoryRedisRow } from './cost.js'
import type { Pool } from './pool.js'
import type { Server } from './redis.js'
import type { Machine } from './results.js'
import { fmt } from './stats.js'

export const MEMORY_1M_FILE = 'bench/results/memory-1m.json'
/** The issue's bound on Redis memory per resource locked within the fence retention. */
export const BYTES_PER_RESOURCE_TARGET = 150
/** Processes and acquire+release cycles in flight in each (one connection per process). */
const PROCS = 2
const CONCURRENCY = 1_000

export interface Memory1m {
  machine: Machine
  row: MemoryRedisRow
  procs: number
  concurrency: number
  /** 1-minute load average before and after: the time taken depends on what else the machine runs. */
  load?: [number, number]
}

export async function memory1m(pool: Pool, server: Server, machine: Machine, quick: boolean): Promise<Memory1m> {
  const resources = quick ? 100_000 : 1_000_000
  const before = os.loadavg()[0]!
  const row = await redisMemory(pool, server, { kind: 'fencelock' }, resources, { procs: PROCS, concurrency: CONCURRENCY })
  return { machine, row, procs: PROCS, concurrency: CONCURRENCY, load: [before, os.loadavg()[0]!] }
}

export function readMemory1m(file: string): Memory1m | undefined {
  if (!existsSync(file)) return undefined
  return JSON.parse(readFileSync(file, 'utf8')) as Memory1m
}

const START = '<!-- memory-1m:start (written by npm run bench -- --memory-1m) -->'
const END = '<!-- memory-1m:end -->'

/** The result as a console table, with the target. */
export function memory1mText(m: Memory1m): string {
  const r = m.row
  return [
    `M (1M). fencelock, ${r.resources.toLocaleString('en-US')} resources locked once each: ${r.bytesPerResource.toFixed(1)} B per resource (target <= ${BYTES_PER_RESOURCE_TARGET} B: ${r.bytesPerResource <= BYTES_PER_RESOURCE_TARGET ? 'met' : 'not met'})`,
    `  used_memory +${(r.usedBytes / 1e6).toFixed(1)} MB, ${r.keys.toLocaleString('en-US')} keys left, ${r.seconds.toFixed(1)} s (${fmt(r.perSec)} resources/s, ${m.procs} processes x ${m.concurrency} in flight)`,
    r.sample ? `  a key left: ${r.sample.key}, PTTL ${fmt(r.sample.pttl / 3_600_000)} h, MEMORY USAGE ${r.sample.bytes} B` : '',
  ].join('\n')
}

/** The dated section of docs/evidence/benchmark.md. */
export function memory1mSection(m: Memory1m): string {
  const r = m.row
  const met = r.bytesPerResource <= BYTES_PER_RESOURCE_TARGET
  return [
    START,
    `## M at 1,000,000 resources (separate run: \`npm run bench -- --memory-1m\`, ${m.machine.date})`,
    '',
    `fencelock locks ${r.resources.toLocaleString('en-US')} distinct resources (\`res:0\` to \`res:${r.resources - 1}\`) once each (acquire + release; ${m.procs} processes, one connection and`,
    `${m.concurrency} cycles in flight each) on a fresh redis-server; Redis \`used_memory\` is read before and after (the clients closed). Machine:`,
    `${m.machine.nproc} cores, ${m.machine.cpu}; Node ${m.machine.node}; Redis ${m.machine.redis}.${m.load ? ` Load average (1 min) ${m.load[0].toFixed(1)} before, ${m.load[1].toFixed(1)} after: the time taken says more about the machine than about the library.` : ''}`,
    '',
    '| resources | used_memory delta | bytes per resource | target | result | keys left | a key left: TTL | its MEMORY USAGE | time | resources/s |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| ${r.resources.toLocaleString('en-US')} | ${(r.usedBytes / 1e6).toFixed(1)} MB | ${r.bytesPerResource.toFixed(1)} B | <= ${BYTES_PER_RESOURCE_TARGET} B | ${met ? 'met' : 'not met'} | ${r.keys.toLocaleString('en-US')} | ${r.sample ? `${fmt(r.sample.pttl / 3_600_000)} h` : '-'} | ${r.sample ? `${r.sample.bytes} B` : '-'} | ${r.seconds.toFixed(1)} s | ${fmt(r.perSec)} |`,
    '',
    `<sub>keys left: DBSIZE after every lease was released (fencelock's fence keys, one per resource, kept for \`fenceRetention\`); the key sampled: ${r.sample ? `\`${r.sample.key}\`` : 'none'}.</sub>`,
    END,
  ].join('\n')
}

/** `markdown` with the 1M section replaced (or appended when it has none). */
export function spliceMemory1m(markdown: string, m: Memory1m | undefined): string {
  if (!m) return markdown
  const section = memory1mSection(m)
  const a = markdown.indexOf(START)
  const b = markdown.indexOf(END)
  if (a >= 0 && b > a) return `${markdown.slice(0, a)}${section}${markdown.slice(b + END.length)}`
  return `${markdown.trimEnd()}\n\n${section}\n`
}
