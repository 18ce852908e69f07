// The tables of the contended scenarios: C and E (and quorum mode's) as contend() measured them,
// S (the semaphores, contended and idle), T (transfers under two locks), R (read-heavy).
import type { ContendRow } from './contend-analysis.js'
import type { Results, Table } from './results.js'
import { fmt } from './stats.js'

const ms = (v: number | undefined) => fmt(v)

export const contendTable = (title: string, rows: ContendRow[], withProcs = false): Table => ({
  title,
  head: [
    'library',
    ...(withProcs ? ['procs x waiters'] : []),
    'sections/s',
    'handoffs/s',
    'gap p50',
    'gap p99',
    'gap max',
    'gap mean',
    'hold mean',
    'wait p50',
    'wait p99',
    'wait max',
    'wire cmds/acq',
    'Redis cmds/acq',
    'pub/sub msgs/acq',
    'client CPU µs/acq',
    'Redis CPU µs/acq',
    'fairness',
    'give-ups',
    'violations',
  ],
  rows: rows.map((x) =>
    x.unavailable
      ? [x.label, ...(withProcs ? [`${x.procs} x ${x.perProc}`] : []), 'not available', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '']
      : [
          x.label,
          ...(withProcs ? [`${x.procs} x ${x.perProc}`] : []),
          fmt(x.sectionsPerSec),
          fmt(x.handoffsPerSec),
          ms(x.gapP50),
          ms(x.gapP99),
          ms(x.gapMax),
          ms(x.gapMean),
          ms(x.holdMean),
          ms(x.waitP50),
          ms(x.waitP99),
          ms(x.waitMax),
          fmt(x.wirePerAcq),
          fmt(x.redisPerAcq),
          fmt(x.messagesPerAcq),
          fmt(x.clientCpuPerAcqUs),
          fmt(x.redisCpuPerAcqUs),
          Number.isFinite(x.fairness) ? fmt(x.fairness) : `∞ (${x.maxSections}/0)`,
          x.failedAcquires ? `${x.giveUps} (+${x.failedAcquires} failed)` : String(x.giveUps),
          String(x.violations),
        ],
  ),
  note:
    'times in ms. gap: release sent by one worker -> lock acquired by another. hold: acquired -> release sent (GET+SET of the counter). wait: acquire called -> resolved. wire cmds: sent by the lock library (counted per connection). ' +
    'Redis cmds: INFO commandstats delta incl. redis.call()s inside Lua, minus the counter GET+SET. pub/sub msgs: messages delivered to all contending processes. client CPU: all contending processes together. fairness: max/min sections per worker. give-ups: the library gave up waiting and was called again. ' +
    'violations: lost counter updates + overlapping sections + fence regressions.',
})

export function contendedTables(r: Results): Table[] {
  const out: Table[] = []
  if (r.C) out.push(contendTable(`C. Contended: 8 processes on one key, GET+SET counter inside, ${r.C[0]?.seconds ?? '?'} s per library`, r.C))
  return out
}

export function scaleTables(r: Results): Table[] {
  const out: Table[] = []
  if (r.E) out.push(contendTable(`E. Scale: waiting processes on one key, ${r.E[0]?.seconds ?? '?'} s each`, r.E, true))
  return out
}

export function semaphoreTables(r: Results): Table[] {
  const out: Table[] = []
  if (r.S) {
    const first = r.S[0]
    out.push({
      title: `S tight loop (no work: measures how fast a released permit is taken again, not how semaphores are used): limit ${first?.limit ?? '?'}, ${first?.procs ?? '?'} processes, INCR/DECR of an inside counter under each permit, ${first?.seconds ?? '?'} s per library`,
      head: [
        'library',
        'permits/s',
        'handed over/s',
        'gap p50',
        'gap p99',
        'gap max',
        'hold mean',
        'wait p50',
        'wait p99',
        'wait max',
        'wire cmds/acq',
        'Redis cmds/acq',
        'pub/sub msgs/acq',
        'client CPU µs/acq',
        'fairness',
        'most inside',
        'give-ups',
        'violations',
      ],
      rows: r.S.map((x) => [
        x.label,
        fmt(x.permitsPerSec),
        fmt(x.handoffsPerSec),
        ms(x.gapP50),
        ms(x.gapP99),
        ms(x.gapMax),
        ms(x.holdMean),
        ms(x.waitP50),
        ms(x.waitP99),
        ms(x.waitMax),
        fmt(x.wirePerAcq),
        fmt(x.redisPerAcq),
        fmt(x.messagesPerAcq),
        fmt(x.clientCpuPerAcqUs),
        Number.isFinite(x.fairness) ? `${fmt(x.fairness)} (${x.maxPermits}/${x.minPermits})` : `∞ (${x.maxPermits}/0)`,
        String(x.maxInside),
        x.failedAcquires ? `${x.giveUps} (+${x.failedAcquires} failed)` : String(x.giveUps),
        String(x.violations),
      ]),
      note:
        'times in ms. handed over: a permit freed by one process and taken by another (permits are matched in the order they were freed); gap: release sent -> that permit acquired by another process. ' +
        "hold: acquired -> release sent (INCR and DECR of the inside counter). fairness: max/min permits per process. most inside: the inside counter's highest INCR reply (must not exceed the limit). " +
        'Redis cmds: INFO commandstats delta incl. redis.call()s inside Lua, minus the INCR+DECR. violations: more inside than the limit, more sections overlapping than the limit, fence regressions.',
    })
    out.push({
      title: `S. Semaphore idle cost: another client holds all ${first?.limit ?? '?'} permits; one waiter in each of ${first?.idle.waiters ?? '?'} processes waits ${first?.idle.seconds ?? '?'} s`,
      head: ['library', 'Redis cmds', 'vs fencelock', 'Redis cmds once parked', 'vs fencelock', 'wire cmds', 'waiter CPU ms', 'Redis CPU ms', 'give-ups'],
      rows: r.S.map((x) => {
        const f = r.S?.find((y) => y.lib === 'fencelock')
        return [
          x.label,
          String(x.idle.redisCommands),
          f ? `${fmt(x.idle.redisCommands / Math.max(1, f.idle.redisCommands))}x` : '-',
          `${x.idle.parkedCommands} in ${fmt(x.idle.parkedSeconds)} s`,
          !f
            ? '-'
            : f.idle.parkedCommands > 0
              ? `${fmt(x.idle.parkedCommands / f.idle.parkedCommands)}x`
              : x.idle.parkedCommands > 0
                ? '∞ (fencelock: 0)'
                : '1.00x',
          String(x.idle.wireCommands),
          fmt(x.idle.waiterCpuMs),
          fmt(x.idle.redisCpuMs),
          String(x.idle.giveUps),
        ]
      }),
      note:
        "Redis cmds: INFO commandstats delta over the whole window, the waiters' first attempts included (incl. redis.call()s inside Lua); once parked: from 500 ms after the waiters started to the end of the window. " +
        'wire cmds: sent by all waiting processes over the whole window; waiter CPU: all of them together.',
    })
  }
  return out
}

export function transferTables(r: Results): Table[] {
  const out: Table[] = []
  if (r.T) {
    const first = r.T[0]
    out.push({
      title: `T. Transfers: ${first?.procs ?? '?'} processes, ${first?.accounts ?? '?'} accounts, random pairs in random order, two GETs and two SETs under both locks, ${first?.seconds ?? '?'} s per library`,
      head: [
        'library',
        'transfers/s',
        'wait p50',
        'wait p99',
        'wait max',
        'hold mean',
        'wire cmds/transfer',
        'Redis cmds/transfer',
        'pub/sub msgs/transfer',
        'client CPU µs/transfer',
        'Redis CPU µs/transfer',
        'fairness',
        'money',
        'give-ups',
        'violations',
      ],
      rows: r.T.map((x) => [
        x.label,
        fmt(x.transfersPerSec),
        ms(x.waitP50),
        ms(x.waitP99),
        ms(x.waitMax),
        ms(x.holdMean),
        fmt(x.wirePerTransfer),
        fmt(x.redisPerTransfer),
        fmt(x.messagesPerTransfer),
        fmt(x.clientCpuPerTransferUs),
        fmt(x.redisCpuPerTransferUs),
        Number.isFinite(x.fairness) ? `${fmt(x.fairness)} (${x.maxTransfers}/${x.minTransfers})` : `∞ (${x.maxTransfers}/0)`,
        `${x.money.initial} → ${x.money.final}`,
        x.failedAcquires ? `${x.giveUps} (+${x.failedAcquires} failed)` : String(x.giveUps),
        String(x.violations),
      ]),
      note:
        'times in ms. wait: transfer called -> both locks held. hold: both held -> release sent (GET both balances, SET both). wire cmds: sent by the lock library; Redis cmds: INFO commandstats delta incl. redis.call()s inside Lua, minus the 2 GETs and 2 SETs. ' +
        'fairness: max/min transfers per process. money: the sum of the 16 balances before and after. violations: money not conserved + sections of one account that overlapped + fence regressions per account.',
    })
  }
  return out
}

export function readHeavyTables(r: Results): Table[] {
  const out: Table[] = []
  if (r.R) {
    const first = r.R[0]
    out.push({
      title: `R. Read-heavy: ${first?.procs ?? '?'} processes, ${Math.round((first?.readShare ?? 0) * 100)}% reads (GET, then ${first?.holdMs ?? '?'} ms), the rest writes (GET, ${first?.holdMs ?? '?'} ms, SET +1), one lock, ${first?.seconds ?? '?'} s per lock`,
      head: [
        'lock',
        'ops/s',
        'reads/s',
        'writes/s',
        'read wait p50',
        'read wait p99',
        'write wait p50',
        'write wait p99',
        'write wait max',
        'most readers at once',
        'wire cmds/op',
        'Redis cmds/op',
        'pub/sub msgs/op',
        'client CPU µs/op',
        'Redis CPU µs/op',
        'violations',
      ],
      rows: r.R.map((x) => [
        x.label,
        fmt(x.opsPerSec),
        fmt(x.readsPerSec),
        fmt(x.writesPerSec),
        ms(x.readWaitP50),
        ms(x.readWaitP99),
        ms(x.writeWaitP50),
        ms(x.writeWaitP99),
        ms(x.writeWaitMax),
        String(x.maxReaders),
        fmt(x.wirePerOp),
        fmt(x.redisPerOp),
        fmt(x.messagesPerOp),
        fmt(x.clientCpuPerOpUs),
        fmt(x.redisCpuPerOpUs),
        x.failedAcquires ? `${x.violations} (+${x.failedAcquires} failed acquires)` : String(x.violations),
      ]),
      note:
        "times in ms. wait: acquire called -> resolved. most readers at once: read sections (acquired -> release sent) overlapping in time. Redis cmds: INFO commandstats delta incl. redis.call()s inside Lua, minus the work's GET (and SET). " +
        "violations: lost increments + write sections that overlapped another section + fences not above every earlier write's (and, for a write, every earlier fence).",
    })
  }
  return out
}

export function quorumTables(r: Results): Table[] {
  const out: Table[] = []
  if (r.quorum) {
    const q = r.quorum
    out.push({
      title: `Quorum (3 Redis nodes): uncontended sequential acquire+release${q.fencelock === 'available' ? '' : ` (fencelock quorum: ${q.fencelock})`}`,
      head: ['library', 'cycles/s', 'acquire p50', 'acquire p99', 'release p50', 'release p99', 'wire cmds/cycle'],
      rows: q.latency.map((x) => [x.label, fmt(x.cyclesPerSec), ms(x.acquireP50), ms(x.acquireP99), ms(x.releaseP50), ms(x.releaseP99), fmt(x.wirePerCycle)]),
    })
    if (q.failures.length) out.push({ title: 'Quorum: libraries that failed', head: ['library', 'error'], rows: q.failures.map((x) => [x.label, x.message]) })
    if (q.contended.length) out.push(contendTable(`Quorum (3 nodes): contended, 8 processes on one key, ${q.contended[0]?.seconds ?? '?'} s each`, q.contended))
    if (q.throughput50?.length) {
      out.push({
        title: `Quorum (3 nodes): 50 concurrent workers in one process, one key each, acquire (median of ${q.throughput50[0]?.rounds.length ?? 1} interleaved rounds; Redis CPU of the first node)`,
        head: ['library', 'cycles/s', 'cycles/s per round', 'client CPU µs/cycle', 'Redis CPU µs/cycle', 'wire cmds/cycle'],
        rows: q.throughput50.map((x) => [
          x.label,
          fmt(x.cyclesPerSec),
          x.rounds.map((v) => fmt(v)).join(' / '),
          fmt(x.clientCpuUsPerCycle),
          fmt(x.redisCpuUsPerCycle),
          fmt(x.wirePerCycle),
        ]),
      })
    }
  }
  return out
}
