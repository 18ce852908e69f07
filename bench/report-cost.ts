// Tables and targets of the cost scenarios (issue 12, "cheaper per lock"): the handoff floor (H)
// and C's gap in multiples of it, E's scale curve, K (cost over many resources), L (renewals at
// scale) and M (Redis memory per resource). bench/report.ts puts them beside the others.
import { K_SIZES, M_CONCURRENCY } from './cost.js'
import { BYTES_PER_RESOURCE_TARGET } from './memory-1m.js'
import type { ContendRow } from './contend-analysis.js'
import type { Results, Table, Target } from './results.js'
import { fmt } from './stats.js'

/** fencelock's handoff gap p50 (C) at most this many handoff floors. */
export const FLOOR_MULTIPLE = 1.5
/** Issue 20: fencelock's gap p50 with 8 processes at most this many floors measured with 8 processes alive. */
export const RING_MULTIPLE = 2.5
/** "Flat": the largest point of a curve within this factor of the smallest. */
export const FLAT = 1.5
/** L: commands per 100 leases per renewal period. */
export const PER_100_TARGET = 1
/** L: event-loop delay p99 of the holding process, ms. */
export const LOOP_DELAY_TARGET = 20

const x = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)}x` : '-')
const metText = (ok: boolean | null) => (ok === null ? 'n/a' : ok ? 'met' : 'not met')

/** E's rows of one library by total waiters, smallest and largest. */
function curve(rows: ContendRow[], lib: string) {
  const mine = rows.filter((r) => r.label === lib).sort((a, b) => a.procs * a.perProc - b.procs * b.perProc)
  return { points: mine, first: mine[0], last: mine[mine.length - 1] }
}

/** Ratios "largest vs smallest" in the bad direction: throughput lost, gap gained. */
function flatness(first: ContendRow, last: ContendRow) {
  return { speed: first.sectionsPerSec / last.sectionsPerSec, gap: last.gapP50 / first.gapP50, wire: last.wirePerHandoff / first.wirePerHandoff }
}

/** K: the per-operation cost at the most resources over the fewest, per library. */
function keyspaceRatios(r: Results) {
  const rows = r.K ?? []
  const labels = [...new Set(rows.map((k) => k.label))]
  return labels.map((label) => {
    const mine = rows.filter((k) => k.label === label).sort((a, b) => a.resources - b.resources)
    const first = mine[0]!
    const last = mine[mine.length - 1]!
    return { label, lib: first.lib, mine, first, last, cost: last.usPerCycle / first.usPerCycle, cpu: last.clientCpuUsPerCycle / first.clientCpuUsPerCycle }
  })
}

const target = (id: string, text: string, measured: string, pass: boolean | null): Target => ({ id, target: text, measured, pass })

/**
 * fencelock's handoff gap with 2 processes (E's 2 x 1) and 8 (C), each against the floor measured
 * with as many processes alive (Hring).
 */
function ringGaps(r: Results): { procs: number; gap: ContendRow; floor: NonNullable<Results['Hring']>[number] }[] {
  const out = []
  for (const floor of r.Hring ?? []) {
    const gap =
      floor.procs === 8
        ? r.C?.find((row) => row.lib === 'fencelock')
        : r.E?.find((row) => row.lib === 'fencelock' && row.procs === floor.procs && row.perProc === 1)
    if (gap) out.push({ procs: floor.procs, gap, floor })
  }
  return out
}

/** C / H: fencelock's handoff gap in multiples of the handoff floor. */
function floorTargets(r: Results): Target[] {
  const c = r.C?.find((row) => row.lib === 'fencelock')
  if (!c || !r.H) return []
  const m50 = c.gapP50 / r.H.p50
  const rings = ringGaps(r).map(({ procs, gap, floor }) => {
    const m = gap.gapP50 / floor.p50
    return target(
      procs === 8 ? 'C / H' : 'E / H',
      procs === 8
        ? `handoff gap p50 (8 processes) <= ${RING_MULTIPLE}x the floor with 8 processes alive`
        : `handoff gap p50 (2 processes), in floors with 2 processes alive (reported)`,
      `${fmt(gap.gapP50)} ms vs floor ${fmt(floor.p50)} ms = ${m.toFixed(2)}x`,
      procs === 8 ? m <= RING_MULTIPLE : null,
    )
  })
  return [
    target(
      'C / H',
      `handoff gap p50 <= ${FLOOR_MULTIPLE}x the handoff floor p50 (pub/sub wake-up + one round trip)`,
      `${fmt(c.gapP50)} ms vs floor ${fmt(r.H.p50)} ms = ${m50.toFixed(2)}x (p99: ${fmt(c.gapP99)} vs ${fmt(r.H.p99)} ms = ${(c.gapP99 / r.H.p99).toFixed(2)}x)`,
      m50 <= FLOOR_MULTIPLE,
    ),
    ...rings,
  ]
}

/** E: throughput, gap and wire commands flat from the fewest waiters to the most. */
function curveTargets(r: Results): Target[] {
  if (!r.E) return []
  const { first, last } = curve(r.E, 'fencelock')
  if (!first || !last || first === last) return []
  const f = flatness(first, last)
  const span = `${last.procs * last.perProc} vs ${first.procs * first.perProc} waiters`
  // A point where acquires failed (a stall: a waiter not woken) compares nothing.
  const stalled = [first, last].filter((p) => p.failedAcquires > 0)
  const note = stalled.length ? ` (not comparable: ${stalled.map((p) => `${p.procs} x ${p.perProc} had ${p.failedAcquires} failed acquires`).join('; ')})` : ''
  const judge = (ok: boolean) => (stalled.length ? null : ok)
  return [
    target(
      'E',
      `flat: sections/s at ${span} within ${FLAT}x`,
      `${fmt(last.sectionsPerSec)} vs ${fmt(first.sectionsPerSec)} /s: ${f.speed.toFixed(2)}x fewer${note}`,
      judge(f.speed <= FLAT),
    ),
    target(
      'E',
      `flat: handoff gap p50 at ${span} within ${FLAT}x`,
      `${fmt(last.gapP50)} vs ${fmt(first.gapP50)} ms = ${f.gap.toFixed(2)}x${note}`,
      judge(f.gap <= FLAT),
    ),
    target(
      'E',
      `flat: wire commands per handoff at ${span} within ${FLAT}x`,
      `${fmt(last.wirePerHandoff)} vs ${fmt(first.wirePerHandoff)} = ${f.wire.toFixed(2)}x${note}`,
      judge(f.wire <= FLAT),
    ),
  ]
}

/** K: time per uncontended cycle flat from the fewest resources to the most. */
function keyspaceTargets(r: Results): Target[] {
  const k = keyspaceRatios(r).find((row) => row.lib === 'fencelock')
  if (!k || k.first === k.last) return []
  return [
    target(
      'K',
      `flat: time per uncontended acquire+release at ${k.last.resources.toLocaleString('en-US')} vs ${k.first.resources} resources within ${FLAT}x`,
      `${fmt(k.last.usPerCycle)} vs ${fmt(k.first.usPerCycle)} µs = ${k.cost.toFixed(2)}x (client CPU ${k.cpu.toFixed(2)}x; ${k.last.keys.toLocaleString('en-US')} keys in Redis)`,
      k.cost <= FLAT,
    ),
  ]
}

/** L: renewal commands, event-loop delay and leases kept while holding many leases. */
function renewalTargets(r: Results): Target[] {
  const l = r.L?.find((row) => row.lib === 'fencelock')
  if (!l) return []
  return [
    target(
      'L',
      `<= ${PER_100_TARGET} command per 100 leases per renewal period (wire: what the holder sends)`,
      `${fmt(l.wirePer100PerPeriod)} wire (${fmt(l.redisPer100PerPeriod)} in INFO commandstats, in-script calls included), ${l.acquired.toLocaleString('en-US')} leases, period ${fmt(l.periodMs / 1000)} s`,
      l.wirePer100PerPeriod <= PER_100_TARGET,
    ),
    target(
      'L',
      `event-loop delay p99 <= ${LOOP_DELAY_TARGET} ms while holding ${l.acquired.toLocaleString('en-US')} leases`,
      `${fmt(l.loopDelayP99)} ms (max ${fmt(l.loopDelayMax)} ms)`,
      l.loopDelayP99 <= LOOP_DELAY_TARGET,
    ),
    target(
      'L',
      'every lease still held after the hold',
      `${l.held.toLocaleString('en-US')} of ${l.leases.toLocaleString('en-US')} (lost ${l.lost})`,
      l.held === l.leases,
    ),
  ]
}

/** M: Redis memory per resource locked once. */
function memoryTargets(r: Results): Target[] {
  const m = r.M?.find((row) => row.lib === 'fencelock' && !row.held)
  if (!m) return []
  return [
    target(
      'M',
      `<= ${BYTES_PER_RESOURCE_TARGET} B of Redis memory per resource locked once`,
      `${m.bytesPerResource.toFixed(1)} B over ${m.resources.toLocaleString('en-US')} resources (${m.keys.toLocaleString('en-US')} keys left)`,
      m.bytesPerResource <= BYTES_PER_RESOURCE_TARGET,
    ),
  ]
}

export function costTargets(r: Results): Target[] {
  return [...floorTargets(r), ...curveTargets(r), ...keyspaceTargets(r), ...renewalTargets(r), ...memoryTargets(r)]
}

/** H, and C's gaps in multiples of it. */
function handoffFloorTables(r: Results): Table[] {
  const out: Table[] = []
  if (r.H) {
    const h = r.H
    out.push({
      title: 'H. Handoff floor: process P publishes, process Q (subscribed) is woken and sends one GET on its other connection',
      head: ['measure', 'samples', 'p50 ms', 'p99 ms', 'max ms', 'missed'],
      rows: [['PUBLISH sent by P -> GET answered in Q', String(h.n), fmt(h.p50), fmt(h.p99), fmt(h.max), String(h.missed)]],
      note: 'one message in flight at a time (Q acknowledges each with an RPUSH, not timed); ioredis; times on CLOCK_MONOTONIC, shared by the processes. A lock handoff does at least this: the release wakes the next waiter, which sends one command and gets its answer.',
    })
    if (r.Hring?.length) {
      out.push({
        title: 'H. Handoff floor with the processes of a contended run alive: a ring, each hop waking the next process',
        head: ['processes alive', 'samples', 'p50 ms', 'p99 ms', 'max ms', 'missed'],
        rows: r.Hring.map((f) => [String(f.procs), String(f.n), fmt(f.p50), fmt(f.p99), fmt(f.max), String(f.missed)]),
        note: "one message in flight: each process, woken by a PUBLISH, sends one GET and publishes to the next (PUBLISH sent -> GET answered, as above); 8 alive as in C, 2 as in E's smallest point.",
      })
      const gaps = ringGaps(r)
      if (gaps.length)
        out.push({
          title: "fencelock's handoff gap against the floor with as many processes alive",
          head: ['processes', 'gap p50 ms', 'floor p50 ms', 'x floor', 'gap p99 ms', 'floor p99 ms', 'target', 'result'],
          rows: gaps.map(({ procs, gap, floor }) => [
            String(procs),
            fmt(gap.gapP50),
            fmt(floor.p50),
            x(gap.gapP50 / floor.p50),
            fmt(gap.gapP99),
            fmt(floor.p99),
            procs === 8 ? `p50 <= ${RING_MULTIPLE}x` : 'reported',
            procs === 8 ? metText(gap.gapP50 / floor.p50 <= RING_MULTIPLE) : '',
          ]),
          note: "8 processes: C's gap; 2 processes: E's 2 x 1 point (one waiter in each of two processes).",
        })
    }
    if (r.C) {
      out.push({
        title: 'C. Handoff gap in multiples of the handoff floor (8 processes, one key)',
        head: ['library', 'gap p50 ms', 'x floor p50', 'gap p99 ms', 'x floor p99', 'target', 'result'],
        rows: r.C.map((row) => {
          const fl = row.lib === 'fencelock'
          return [
            row.label,
            fmt(row.gapP50),
            x(row.gapP50 / h.p50),
            fmt(row.gapP99),
            x(row.gapP99 / h.p99),
            fl ? `p50 <= ${FLOOR_MULTIPLE}x` : '',
            fl ? metText(row.gapP50 / h.p50 <= FLOOR_MULTIPLE) : '',
          ]
        }),
        note: 'gap: release sent by one process -> lock acquired by another (C). The peers poll: their gap is short only when a retry happens to land right after the release (their handoffs/s in C shows how rarely).',
      })
    }
  }
  return out
}

/** E's curve per library, largest point against the smallest. */
function scaleCurveTables(r: Results): Table[] {
  const out: Table[] = []
  if (r.E) {
    const labels = [...new Set(r.E.map((row) => row.label))]
    const rows: string[][] = []
    let head: string[] = []
    for (const label of labels) {
      const { points, first, last } = curve(r.E, label)
      if (!first || !last) continue
      head = [
        'library',
        'measure',
        ...points.map((p) => `${p.procs * p.perProc} (${p.procs} x ${p.perProc})`),
        `${last.procs * last.perProc} vs ${first.procs * first.perProc}`,
        'target',
        'result',
      ]
      const f = flatness(first, last)
      const fl = first.lib === 'fencelock'
      rows.push([
        label,
        'sections/s',
        ...points.map((p) => fmt(p.sectionsPerSec)),
        `${x(f.speed)} fewer`,
        fl ? `<= ${FLAT}x` : '',
        fl ? metText(f.speed <= FLAT) : '',
      ])
      rows.push([label, 'gap p50 ms', ...points.map((p) => fmt(p.gapP50)), x(f.gap), fl ? `<= ${FLAT}x` : '', fl ? metText(f.gap <= FLAT) : ''])
      rows.push([label, 'gap p99 ms', ...points.map((p) => fmt(p.gapP99)), x(last.gapP99 / first.gapP99), '', ''])
      rows.push([
        label,
        'wire cmds/handoff',
        ...points.map((p) => fmt(p.wirePerHandoff)),
        x(f.wire),
        fl ? `<= ${FLAT}x` : '',
        fl ? metText(f.wire <= FLAT) : '',
      ])
    }
    if (rows.length)
      out.push({
        title: 'E. Scale curve: waiters on one key (processes x waiters per process)',
        head,
        rows,
        note: 'largest vs smallest in the costly direction: how many times fewer sections/s, how many times longer the gap. Flat = within 1.5x.',
      })
  }
  return out
}

/** K, and its flatness. */
function keyspaceTables(r: Results): Table[] {
  const out: Table[] = []
  if (r.K) {
    out.push({
      title: `K. Uncontended cost over many resources: 1 worker, sequential acquire+release cycling over ${K_SIZES.map((n) => n.toLocaleString('en-US')).join(', ')} names`,
      head: [
        'library',
        'resources',
        'keys in Redis',
        'cycles/s',
        'µs/cycle',
        'acquire p50',
        'acquire p99',
        'release p50',
        'release p99',
        'client CPU µs/cycle',
        'Redis CPU µs/cycle',
        'wire cmds/cycle',
      ],
      rows: r.K.map((k) => [
        k.label,
        k.resources.toLocaleString('en-US'),
        k.keys.toLocaleString('en-US'),
        fmt(k.cyclesPerSec),
        fmt(k.usPerCycle),
        fmt(k.acquireP50),
        fmt(k.acquireP99),
        fmt(k.releaseP50),
        fmt(k.releaseP99),
        fmt(k.clientCpuUsPerCycle),
        fmt(k.redisCpuUsPerCycle),
        fmt(k.wirePerCycle),
      ]),
      note: 'fencelock locks every name once before the measured cycles, so Redis holds one fence key per resource (keys in Redis); the peers keep nothing after a release. latencies in ms.',
    })
    const ratios = keyspaceRatios(r)
    out.push({
      title: 'K. Flatness: cost per operation at the most resources vs the fewest',
      head: ['library', ...K_SIZES.map((n) => `µs/cycle at ${n.toLocaleString('en-US')}`), 'most vs fewest', 'client CPU most vs fewest', 'target', 'result'],
      rows: ratios.map((k) => {
        const fl = k.lib === 'fencelock'
        return [
          k.label,
          ...K_SIZES.map((n) => fmt(k.mine.find((m) => m.resources === n)?.usPerCycle)),
          x(k.cost),
          x(k.cpu),
          fl ? `<= ${FLAT}x` : '',
          fl ? metText(k.cost <= FLAT) : '',
        ]
      }),
      note: 'the peers are the control: they keep no state per resource, so their ratio is the noise of the machine over the scenario.',
    })
  }
  return out
}

/** L. */
function renewalTables(r: Results): Table[] {
  const out: Table[] = []
  if (r.L?.length) {
    const first = r.L[0]!
    out.push({
      title: `L. Renewals at scale: one process holds ${first.leases.toLocaleString('en-US')} auto-extended leases (ttl ${fmt(first.ttl / 1000)} s) for ${fmt(first.holdSeconds)} s`,
      head: [
        'library',
        'renewal period s',
        'periods',
        'held at end',
        'acquire s',
        'wire cmds/period',
        'wire per 100 leases/period',
        'Redis cmds/period',
        'Redis per 100 leases/period',
        'scripts/period',
        'Redis CPU ms/period',
        'client CPU ms/period',
        'loop delay p50 ms',
        'loop delay p99 ms',
        'loop delay max ms',
        'heap B/lease',
      ],
      rows: r.L.map((l) => [
        l.label,
        fmt(l.periodMs / 1000),
        fmt(l.periods),
        `${l.held.toLocaleString('en-US')}/${l.leases.toLocaleString('en-US')}`,
        fmt(l.acquireSeconds),
        fmt(l.wirePerPeriod),
        fmt(l.wirePer100PerPeriod),
        fmt(l.redisPerPeriod),
        fmt(l.redisPer100PerPeriod),
        fmt(l.scriptsPerPeriod),
        fmt(l.redisCpuMsPerPeriod),
        fmt(l.clientCpuMsPerPeriod),
        fmt(l.loopDelayP50),
        fmt(l.loopDelayP99),
        fmt(l.loopDelayMax),
        fmt(l.heapPerLease),
      ]),
      note:
        `renewal period: each library's nominal one (fencelock ttl/3, redlock using() ttl - 500 ms, redis-semaphore 0.8 x ttl); periods = hold / period. wire cmds: sent by the holding process over the hold; Redis cmds: INFO commandstats delta over the hold, redis.call()s inside scripts included; scripts: EVALSHA + EVAL calls. ` +
        `loop delay: perf_hooks.monitorEventLoopDelay over the hold (5 ms resolution; its samples are tick intervals, so 5 ms is subtracted). heap: heapUsed after gc at the end of the hold minus before the first acquire, per lease. Targets for fencelock: <= ${PER_100_TARGET} (wire) command per 100 leases per period, loop delay p99 <= ${LOOP_DELAY_TARGET} ms, all held.`,
    })
  }
  return out
}

/** M. */
function redisMemoryTables(r: Results): Table[] {
  const out: Table[] = []
  if (r.M?.length) {
    out.push({
      title: `M. Redis memory per resource: ${r.M[0]!.resources.toLocaleString('en-US')} distinct resources locked once each (acquire + release)`,
      head: ['library', 'used_memory delta', 'bytes per resource', 'keys left', 'a key left', 'its TTL', 'its MEMORY USAGE', 'time s', 'target', 'result'],
      rows: r.M.map((m) => {
        // The target is for a resource locked once; the held row shows what a lease adds while it lasts.
        const fl = m.lib === 'fencelock' && !m.held
        return [
          m.label,
          `${fmt(m.usedBytes / 1e6)} MB`,
          m.bytesPerResource.toFixed(1),
          m.keys.toLocaleString('en-US'),
          m.sample ? m.sample.key : '-',
          m.sample ? (m.sample.pttl < 0 ? 'none' : `${fmt(m.sample.pttl / 3_600_000)} h`) : '-',
          m.sample ? `${m.sample.bytes} B` : '-',
          fmt(m.seconds),
          fl ? `<= ${BYTES_PER_RESOURCE_TARGET} B` : '',
          fl ? metText(m.bytesPerResource <= BYTES_PER_RESOURCE_TARGET) : '',
        ]
      }),
      note: `used_memory: INFO memory of a flushed server before, and after every client closed; keys left: DBSIZE (fencelock: one fence key per resource, kept for fenceRetention, 1 day by default). "held": every resource acquired and not released, its lock key ("<token> <since> <extended> <holder>", with its expiry) beside the fence key; its sample is a lock key. Resources named res:0 to res:${r.M[0]!.resources - 1}; ${M_CONCURRENCY} cycles in flight on one connection.`,
    })
  }
  return out
}

export function costTables(r: Results): Table[] {
  return [...handoffFloorTables(r), ...scaleCurveTables(r), ...keyspaceTables(r), ...renewalTables(r), ...redisMemoryTables(r)]
}
