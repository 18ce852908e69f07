// The tables of the uncontended scenarios: the round-trip floor, A (with telemetry's cost), B, D
// (the idle cost of waiting) and F (heap memory).
import { TELEMETRY_BAND, telemetryCost } from './report-targets.js'
import type { Results, Table } from './results.js'
import { fmt } from './stats.js'

const ms = (v: number | undefined) => fmt(v)

export function floorTables(r: Results): Table[] {
  const out: Table[] = []
  if (r.floor) {
    out.push({
      title: 'Round-trip floor (ioredis, one connection, sequential)',
      head: ['measure', 'p50 ms', 'p99 ms'],
      rows: [
        ['PING', ms(r.floor.pingP50), ms(r.floor.pingP99)],
        ['SET NX PX + EVAL compare-and-delete', ms(r.floor.pairP50), ms(r.floor.pairP99)],
      ],
    })
  }
  return out
}

/** A, and fencelock without and with a telemetry subscriber. */
export function latencyTables(r: Results): Table[] {
  const out: Table[] = []
  const seedA = r.A?.find((x) => x.lib === 'seed')
  if (r.A) {
    out.push({
      title: `A. Uncontended latency: 1 worker, sequential acquire+release on distinct keys (median of ${r.A[0]?.rounds.length ?? 1} interleaved rounds)`,
      head: [
        'library',
        'cycles/s',
        'vs seed',
        'acquire p50',
        'acquire p99',
        'release p50',
        'release p99',
        'wire cmds/cycle',
        'client CPU µs/cycle',
        'client CPU vs seed',
        'Redis CPU µs/cycle',
        'promises/cycle',
        'heap KB/cycle',
        'objects/cycle',
      ],
      rows: r.A.map((x) => [
        x.label,
        fmt(x.cyclesPerSec),
        seedA ? `${(x.cyclesPerSec / seedA.cyclesPerSec).toFixed(2)}x` : '-',
        ms(x.acquireP50),
        ms(x.acquireP99),
        ms(x.releaseP50),
        ms(x.releaseP99),
        fmt(x.wirePerCycle),
        fmt(x.clientCpuUsPerCycle),
        seedA ? `${(x.clientCpuUsPerCycle / seedA.clientCpuUsPerCycle).toFixed(2)}x` : '-',
        fmt(x.redisCpuUsPerCycle),
        x.promisesPerCycle === undefined ? '-' : fmt(x.promisesPerCycle),
        x.heapBytesPerCycle === undefined ? '-' : (x.heapBytesPerCycle / 1024).toFixed(1),
        x.objectsPerCycle === undefined ? '-' : fmt(x.objectsPerCycle),
      ]),
      note: 'latencies in ms; client CPU: process.cpuUsage (user+system) of the worker over the measured cycles, per cycle, every library alike; Redis CPU: INFO cpu delta of the server; promises/cycle: every promise created per cycle, the client library\'s and the caller\'s own await included (async_hooks, 500 more cycles after the timed ones); heap KB/cycle: bytes allocated on the JS heap per cycle (V8 sampling heap profiler at 64 bytes, 500 more cycles: an estimate); objects/cycle: the objects those samples stand for (each sample of s bytes counts 1 / (1 - e^(-s/64)) objects: an estimate). "+ telemetry subscriber": fencelock with a subscriber on every fencelock:* diagnostics channel.',
    })
    const tel = telemetryCost(r)
    if (tel) {
      out.push({
        title: `A. Telemetry cost: fencelock uncontended, without and with a subscriber on every fencelock:* diagnostics channel (same ${tel.rounds} interleaved rounds)`,
        head: ['fencelock', 'cycles/s (median round)', 'cycles/s per round', 'client CPU µs/cycle', 'CPU per round', 'target', 'result'],
        rows: [
          [
            tel.off.label,
            fmt(tel.off.cyclesPerSec),
            tel.off.rounds.map((v) => fmt(v)).join(' / '),
            fmt(tel.off.clientCpuUsPerCycle),
            (tel.off.cpuRounds ?? []).map((v) => fmt(v)).join(' / '),
            '',
            '',
          ],
          [
            tel.on.label,
            fmt(tel.on.cyclesPerSec),
            tel.on.rounds.map((v) => fmt(v)).join(' / '),
            fmt(tel.on.clientCpuUsPerCycle),
            (tel.on.cpuRounds ?? []).map((v) => fmt(v)).join(' / '),
            '',
            '',
          ],
          [
            'with / without',
            `${tel.speed.toFixed(2)}x`,
            '',
            `${tel.cpu.toFixed(2)}x`,
            '',
            `>= ${(1 / TELEMETRY_BAND).toFixed(2)}x speed, <= ${TELEMETRY_BAND.toFixed(2)}x CPU`,
            tel.speed >= 1 / TELEMETRY_BAND && tel.cpu <= TELEMETRY_BAND ? 'met' : 'not met',
          ],
        ],
        note: 'the subscriber reads one field of each message, as an exporter would; the message objects are built only when someone subscribes, so the row without a subscriber is the cost of the library with its telemetry dormant.',
      })
    }
  }
  return out
}

const B_TITLES = [
  ['B', '50 concurrent workers in one process, one key each, acquire'],
  ['B100', '50 concurrent workers, 100 keys each (5,000 in all), tryAcquire'],
  ['Bscale', '1,000 concurrent workers on 100,000 keys, tryAcquire'],
] as const

export function throughputTables(r: Results): Table[] {
  const out: Table[] = []
  for (const [id, what] of B_TITLES) {
    const rows = r[id]
    if (!rows) continue
    const seed = rows.find((x) => x.lib === 'seed')
    out.push({
      title: `${id}. Uncontended throughput: ${what} (median of ${rows[0]?.rounds.length ?? 1} interleaved rounds)`,
      head: ['library', 'cycles/s', 'vs seed', 'client CPU µs/cycle', 'Redis CPU µs/cycle', 'wire cmds/cycle'],
      rows: rows.map((x) => [
        x.label,
        fmt(x.cyclesPerSec),
        seed ? `${(x.cyclesPerSec / seed.cyclesPerSec).toFixed(2)}x` : '-',
        fmt(x.clientCpuUsPerCycle),
        fmt(x.redisCpuUsPerCycle),
        fmt(x.wirePerCycle),
      ]),
    })
  }
  return out
}

export function idleTables(r: Results): Table[] {
  const out: Table[] = []
  if (r.D) {
    const f = r.D.find((x) => x.lib === 'fencelock')
    out.push({
      title: `D. Idle cost: 8 waiters in one process while another client holds the lock for ${r.D[0]?.seconds ?? '?'} s`,
      head: ['library', 'Redis cmds', 'vs fencelock', 'wire cmds', 'waiter CPU ms', 'Redis CPU ms', 'give-ups'],
      rows: r.D.map((x) => [
        x.label,
        String(x.redisCommands),
        f ? `${fmt(x.redisCommands / Math.max(1, f.redisCommands))}x` : '-',
        String(x.wireCommands),
        fmt(x.waiterCpuMs),
        fmt(x.redisCpuMs),
        String(x.giveUps),
      ]),
      note: 'Redis cmds: INFO commandstats delta over the window (incl. redis.call()s inside Lua); wire cmds: sent by the waiting process.',
    })
  }
  return out
}

export function heapTables(r: Results): Table[] {
  const out: Table[] = []
  if (r.F) {
    out.push({
      title: `F. Memory: heap bytes per item, from ${fmt(r.F[0]?.n)} held leases / waiters (node --expose-gc)`,
      head: ['library', 'bytes per held lease', 'bytes per waiter'],
      rows: r.F.map((x) => [x.label, fmt(x.heldBytes), fmt(x.waiterBytes)]),
      note: 'waiters of polling libraries are measured while they poll (their in-flight commands included).',
    })
  }
  return out
}
