// The targets of `npm run bench`: what fencelock must measure against its peers (and the seed) in
// the same run, each with PASS/FAIL; the cost scenarios' targets are in report-cost.ts.
import type { ContendRow } from './contend-analysis.js'
import type { MemoryRow } from './heap-memory.js'
import type { IdleRow } from './idle.js'
import type { ThroughputRow } from './latency.js'
import { REFERENCE_KINDS } from './libs.js'
import { costTargets } from './report-cost.js'
import { revocationTargets } from './report-revocation.js'
import type { Results, Target } from './results.js'
import { workTargets } from './report-work.js'
import type { SemaphoreRow } from './semaphore-analysis.js'
import { fmt } from './stats.js'

type Add = (id: string, target: string, measured: string, pass: boolean | null) => void

const ms = (v: number | undefined) => fmt(v)
const fl = (rows: { lib: string; label: string }[] | undefined) => rows?.find((x) => x.lib === 'fencelock')
const seed = <T extends { lib: string }>(rows: T[] | undefined) => rows?.find((x) => x.lib === 'seed')

/** Issue 20's throughput targets: against the seed and the fastest peer, by how much, per scenario. */
const SPEED_TARGETS = { A: { seed: 0.95, peer: 0.9 }, B: { seed: 1.3, peer: 1.2 }, B100: { seed: 1.3, peer: 1.2 } } as const

type SpeedRow = { lib: string; label: string; telemetry?: boolean; cyclesPerSec: number }

/** The row with the most cycles/s. */
const fastest = <T extends { cyclesPerSec: number }>(rows: T[]): T | undefined =>
  rows.reduce<T | undefined>((a, b) => (!a || b.cyclesPerSec > a.cyclesPerSec ? b : a), undefined)

function speedTargets(r: Results, add: Add): void {
  for (const [s, want] of Object.entries(SPEED_TARGETS) as [keyof typeof SPEED_TARGETS, { seed: number; peer: number }][]) {
    const rows = (r[s] as SpeedRow[] | undefined) ?? []
    const f = rows.find((x) => x.lib === 'fencelock' && !x.telemetry)
    const sd = seed(rows)
    if (f && sd) {
      const ratio = f.cyclesPerSec / sd.cyclesPerSec
      add(
        s,
        `cycles/s >= ${want.seed}x seed (SET NX PX + EVAL)`,
        `${fmt(f.cyclesPerSec)} vs ${fmt(sd.cyclesPerSec)} = ${ratio.toFixed(2)}x`,
        ratio >= want.seed,
      )
    }
    const best = fastest(rows.filter((x) => x.lib !== 'fencelock' && x !== sd && !REFERENCE_KINDS.has(x.lib)))
    if (f && best) {
      const ratio = f.cyclesPerSec / best.cyclesPerSec
      add(
        s,
        `cycles/s >= ${want.peer}x the fastest peer`,
        `${fmt(f.cyclesPerSec)} vs ${fmt(best.cyclesPerSec)} (${best.label}) = ${ratio.toFixed(2)}x`,
        ratio >= want.peer,
      )
    }
  }
}

/** B's CPU per cycle at or below the seed's (client and Redis), and the cost per cycle flat from 50 workers to 1,000. */
function throughputCostTargets(r: Results, add: Add): void {
  for (const s of ['B', 'B100'] as const) {
    const f = fl(r[s]) as ThroughputRow | undefined
    const sd = seed(r[s])
    if (!f || !sd) continue
    for (const [side, key] of [
      ['client', 'clientCpuUsPerCycle'],
      ['Redis', 'redisCpuUsPerCycle'],
    ] as const) {
      add(s, `${side} CPU µs per cycle <= the seed's`, `${fmt(f[key])} vs ${fmt(sd[key])} µs`, f[key] <= sd[key])
    }
  }
  const small = fl(r.B100) as ThroughputRow | undefined
  const big = fl(r.Bscale) as ThroughputRow | undefined
  if (small && big) {
    const cost = (x: ThroughputRow) => x.clientCpuUsPerCycle + x.redisCpuUsPerCycle
    const ratio = cost(big) / cost(small)
    add(
      'Bscale',
      'CPU per cycle (client + Redis) at 1,000 workers / 100,000 keys <= 1.5x 50 workers / 5,000 keys',
      `${fmt(cost(big))} vs ${fmt(cost(small))} µs = ${ratio.toFixed(2)}x`,
      ratio <= 1.5,
    )
  }
}

/** Issue 20: in quorum mode, 50 workers at least twice the fastest Redlock peer. */
function quorumThroughputTarget(r: Results, add: Add): void {
  const rows = r.quorum?.throughput50 ?? []
  const f = fl(rows) as ThroughputRow | undefined
  const best = fastest(rows.filter((x) => x.lib !== 'fencelock' && !REFERENCE_KINDS.has(x.lib)))
  if (!f || !best) return
  const ratio = f.cyclesPerSec / best.cyclesPerSec
  add(
    'Q',
    'quorum of 3, 50 workers: cycles/s >= 2x the fastest Redlock peer',
    `${fmt(f.cyclesPerSec)} vs ${fmt(best.cyclesPerSec)} (${best.label}) = ${ratio.toFixed(2)}x`,
    ratio >= 2,
  )
}

function uncontendedTargets(r: Results, add: Add): void {
  speedTargets(r, add)
  throughputCostTargets(r, add)
  quorumThroughputTarget(r, add)
  const aPlain = r.A?.find((x) => x.lib === 'fencelock' && !x.telemetry)
  const aSeed = seed(r.A)
  if (aPlain && aSeed) {
    const cpu = aPlain.clientCpuUsPerCycle / aSeed.clientCpuUsPerCycle
    add(
      'A',
      "client CPU µs per cycle <= 1.3x the seed's",
      `${fmt(aPlain.clientCpuUsPerCycle)} vs ${fmt(aSeed.clientCpuUsPerCycle)} µs = ${cpu.toFixed(2)}x`,
      cpu <= 1.3,
    )
  }
  // Issue 20: at most 8 promises per sequential acquire+release where the seed's two calls make 4.
  // The bench counts the same wrapper around every library (its async acquire, its `then`, the
  // loop's await), so the target is read as at most 4 more than the seed's count.
  if (aPlain?.promisesPerCycle !== undefined && aSeed?.promisesPerCycle !== undefined) {
    // Each count is whole promises over the same number of cycles: judge the difference as that
    // ratio of whole numbers, not as its floating-point rest (11.002 - 7.002 = 4.000000000000001).
    const more = Math.round((aPlain.promisesPerCycle - aSeed.promisesPerCycle) * 1e6) / 1e6
    add(
      'A',
      "promises per cycle <= the seed's + 4 (at most 8 where the seed's own calls make 4)",
      `${fmt(aPlain.promisesPerCycle)} vs ${fmt(aSeed.promisesPerCycle)} = +${fmt(more)}`,
      more <= 4,
    )
  }
  const tel = telemetryCost(r)
  if (tel) {
    add(
      'A (telemetry)',
      `a subscriber on every fencelock:* channel costs <= ${Math.round((TELEMETRY_BAND - 1) * 100)}%: cycles/s and client CPU per cycle within the band`,
      `cycles/s ${fmt(tel.on.cyclesPerSec)} vs ${fmt(tel.off.cyclesPerSec)} = ${tel.speed.toFixed(2)}x; CPU ${fmt(tel.on.clientCpuUsPerCycle)} vs ${fmt(tel.off.clientCpuUsPerCycle)} µs/cycle = ${tel.cpu.toFixed(2)}x (${tel.rounds} rounds)`,
      tel.speed >= 1 / TELEMETRY_BAND && tel.cpu <= TELEMETRY_BAND,
    )
  }
}

function contendedTargets(r: Results, add: Add): void {
  const c = fl(r.C) as ContendRow | undefined
  if (c) {
    const ping = r.floor?.pingP50
    if (ping !== undefined)
      add(
        'C',
        'handoff gap p50 <= 4x PING RTT p50',
        `${ms(c.gapP50)} ms vs 4 x ${ms(ping)} = ${ms(4 * ping)} ms (${(c.gapP50 / ping).toFixed(1)}x RTT)`,
        c.gapP50 <= 4 * ping,
      )
    add('C', 'handoff gap p99 <= 2 ms', `${ms(c.gapP99)} ms`, c.gapP99 <= 2)
    const peers = (r.C ?? []).filter((x) => x.lib !== 'fencelock' && !REFERENCE_KINDS.has(x.lib) && !x.label.includes('retry '))
    const best = peers.reduce<ContendRow | undefined>((a, b) => (!a || b.handoffsPerSec > a.handoffsPerSec ? b : a), undefined)
    if (best) {
      add(
        'C',
        'handoffs/s >= 10x best peer at defaults',
        `${fmt(c.handoffsPerSec)} vs ${fmt(best.handoffsPerSec)} (${best.label}) = ${(c.handoffsPerSec / best.handoffsPerSec).toFixed(1)}x`,
        c.handoffsPerSec >= 10 * best.handoffsPerSec,
      )
    }
    add('C', 'fairness max/min sections per worker <= 1.5', `${fmt(c.fairness)} (${c.maxSections}/${c.minSections})`, c.fairness <= 1.5)
    // Judged at two decimals: a subscriber connection opened during the run (SUBSCRIBE) is a one-off, not a per-acquisition cost.
    add(
      'C',
      '<= 3 wire commands per acquisition',
      `${c.wirePerAcq.toFixed(3)} (EVAL/EVALSHA per acquisition: ${((c.byCommand.evalsha ?? 0) + (c.byCommand.eval ?? 0)) / c.sections})`,
      Math.round(c.wirePerAcq * 100) / 100 <= 3,
    )
    add(
      'C',
      'counter check: 0 violations',
      `${c.violations} (lost updates ${c.lostUpdates}, overlaps ${c.overlaps}, fence regressions ${c.fenceRegressions})`,
      c.violations === 0,
    )
  }
}

function idleTargets(r: Results, add: Add): void {
  const d = fl(r.D) as IdleRow | undefined
  if (d) {
    const peers = (r.D ?? []).filter((x) => x.lib !== 'fencelock' && !REFERENCE_KINDS.has(x.lib))
    const defaults = peers.filter((x) => !x.label.includes('retry '))
    const tuned = peers.filter((x) => x.tuned)
    const minDefault = Math.min(...defaults.map((x) => x.redisCommands))
    const minTuned = Math.min(...tuned.map((x) => x.redisCommands))
    add('D', 'fewer Redis commands than every peer at defaults', `${d.redisCommands} vs fewest ${minDefault}`, d.redisCommands < minDefault)
    add(
      'D',
      '>= 100x fewer Redis commands than every peer at 10 ms',
      `${d.redisCommands} vs fewest ${minTuned} = ${(minTuned / Math.max(1, d.redisCommands)).toFixed(0)}x`,
      d.redisCommands * 100 <= minTuned,
    )
    // The same two, counting wire commands (INFO commandstats also counts every redis.call() inside Lua).
    const minDefaultWire = Math.min(...defaults.map((x) => x.wireCommands))
    const minTunedWire = Math.min(...tuned.map((x) => x.wireCommands))
    add('D (wire)', 'fewer wire commands than every peer at defaults', `${d.wireCommands} vs fewest ${minDefaultWire}`, d.wireCommands < minDefaultWire)
    add(
      'D (wire)',
      '>= 100x fewer wire commands than every peer at 10 ms',
      `${d.wireCommands} vs fewest ${minTunedWire} = ${(minTunedWire / Math.max(1, d.wireCommands)).toFixed(0)}x`,
      d.wireCommands * 100 <= minTunedWire,
    )
  }
}

function semaphoreTargets(r: Results, add: Add): void {
  const sf = fl(r.S) as SemaphoreRow | undefined
  const sp = r.S?.find((x) => x.lib === 'semaphore' && x.label.includes('defaults'))
  if (sf && sp) {
    add(
      'S',
      'tight loop, reported (replaced by S at work, issue 44): permits handed over/s vs redis-semaphore Semaphore at defaults',
      `${fmt(sf.handoffsPerSec)} vs ${fmt(sp.handoffsPerSec)} = ${(sf.handoffsPerSec / sp.handoffsPerSec).toFixed(2)}x (permits/s: ${fmt(sf.permitsPerSec)} vs ${fmt(sp.permitsPerSec)})`,
      null,
    )
    // Judged on the parked stretch (the cost of waiting); the whole window, first attempts included, is shown beside it.
    add(
      'S',
      '>= 100x fewer Redis commands while the waiters idle (parked)',
      `${sf.idle.parkedCommands} vs ${sp.idle.parkedCommands} over ${fmt(sf.idle.parkedSeconds)} s = ${sf.idle.parkedCommands === 0 ? '∞' : (sp.idle.parkedCommands / sf.idle.parkedCommands).toFixed(0)}x; whole window with first attempts: ${sf.idle.redisCommands} vs ${sp.idle.redisCommands} = ${(sp.idle.redisCommands / Math.max(1, sf.idle.redisCommands)).toFixed(0)}x`,
      sf.idle.parkedCommands * 100 <= sp.idle.parkedCommands,
    )
  }
  if (sf) {
    add('S', 'fairness max/min permits per process <= 1.5', `${fmt(sf.fairness)} (${sf.maxPermits}/${sf.minPermits})`, sf.fairness <= 1.5)
    add(
      'S',
      `never more than ${sf.limit} holders: 0 violations`,
      `${sf.violations} (most inside at once ${sf.maxInside}, most overlapping ${sf.maxOverlap}, fence regressions ${sf.fenceRegressions})`,
      sf.violations === 0,
    )
  }
}

function transferTargets(r: Results, add: Add): void {
  const tf = r.T?.find((x) => x.lib === 'fencelock-multi')
  if (tf) {
    for (const peer of (r.T ?? []).filter((x) => x !== tf)) {
      add(
        'T',
        `withLocks transfers/s >= ${peer.label}`,
        `${fmt(tf.transfersPerSec)} vs ${fmt(peer.transfersPerSec)} = ${(tf.transfersPerSec / peer.transfersPerSec).toFixed(2)}x`,
        tf.transfersPerSec >= peer.transfersPerSec,
      )
    }
    add('T', 'fairness max/min transfers per process <= 1.5', `${fmt(tf.fairness)} (${tf.maxTransfers}/${tf.minTransfers})`, tf.fairness <= 1.5)
    add(
      'T',
      'money conserved, no overlap, fences grow: 0 violations (every library)',
      (r.T ?? []).map((x) => `${x.label}: ${x.violations}`).join('; '),
      (r.T ?? []).every((x) => x.violations === 0),
    )
  }
}

function readHeavyTargets(r: Results, add: Add): void {
  const rw = r.R?.find((x) => x.lib === 'fencelock-rw')
  const rm = r.R?.find((x) => x.lib === 'fencelock-mutex')
  if (rw && rm) {
    add(
      'R',
      'read/write lock ops/s > mutex ops/s',
      `${fmt(rw.opsPerSec)} vs ${fmt(rm.opsPerSec)} = ${(rw.opsPerSec / rm.opsPerSec).toFixed(2)}x`,
      rw.opsPerSec > rm.opsPerSec,
    )
    add(
      'R',
      'no writer starvation: write wait p99 <= mutex write wait p99',
      `${ms(rw.writeWaitP99)} vs ${ms(rm.writeWaitP99)} ms (max ${ms(rw.writeWaitMax)} vs ${ms(rm.writeWaitMax)})`,
      rw.writeWaitP99 <= rm.writeWaitP99,
    )
    add(
      'R',
      'writers exclusive, no lost write, fences grow: 0 violations',
      `${rw.violations} (lost writes ${rw.lostWrites}, writer overlaps ${rw.writerOverlaps}, fence regressions ${rw.fenceRegressions}); mutex ${rm.violations}`,
      rw.violations === 0 && rm.violations === 0,
    )
  }
}

export function targets(r: Results): Target[] {
  const out: Target[] = []
  const add: Add = (id, target, measured, pass) => out.push({ id, target, measured, pass })
  uncontendedTargets(r, add)
  contendedTargets(r, add)
  idleTargets(r, add)
  const f = fl(r.F) as MemoryRow | undefined
  if (f) add('F', '< 2 KB heap per held lease', `${fmt(f.heldBytes)} B`, f.heldBytes < 2048)
  workTargets(r, add)
  semaphoreTargets(r, add)
  transferTargets(r, add)
  readHeavyTargets(r, add)
  out.push(...costTargets(r))
  out.push(...revocationTargets(r))
  return out
}

/**
 * "Telemetry at zero cost", read as: with a subscriber on every channel, fencelock's uncontended
 * cycle is within this factor of the same cycle without one (the noise band of a shared machine).
 * The issue gives no number; this is the bench's.
 */
export const TELEMETRY_BAND = 1.05

/** fencelock in A without and with a telemetry subscriber (same rounds), and the ratios. */
export function telemetryCost(r: Results) {
  const off = r.A?.find((x) => x.lib === 'fencelock' && !x.telemetry)
  const on = r.A?.find((x) => x.lib === 'fencelock' && x.telemetry)
  if (!off || !on) return undefined
  return { off, on, speed: on.cyclesPerSec / off.cyclesPerSec, cpu: on.clientCpuUsPerCycle / off.clientCpuUsPerCycle, rounds: off.rounds.length }
}
