// The checker: reads a history and the final state, and says whether the run was safe (a), how
// often holders overlapped (b), whether the system came back (c), and whether every lost lease was
// signalled (d). It trusts nothing the workers concluded; it only compares what they observed.
import type { FaultEvent, HistoryEvent, LostEvent, OpEvent } from './history.js'
import type { FinalState } from './run.js'
import type { SemaphoreCheck } from './semaphore-checker.js'

/** One lease as its holder saw it: from the acquire's reply to its release request or its abort. */
export interface LeaseInterval {
  worker: string
  pid: number
  resource: string
  fence: number
  start: number
  end: number
  /** How the interval ended. */
  ended: 'released' | 'release-false' | 'release-late' | 'release-unknown' | 'lost' | 'killed' | 'open'
  lost?: LostEvent
  /** The holder's last write was refused as stale. */
  staleRejected: boolean
  /** The lease's own deadline (history clock), from the acquire's reply. */
  deadline: number
}

export interface Overlap {
  resource: string
  a: LeaseInterval
  b: LeaseInterval
  ms: number
}

export interface StaleAccepted {
  store: 'sql' | 'redis'
  /** Account id (sql) or resource (redis). */
  where: string
  fence: number
  /** The larger fence that had been accepted before it. */
  after: number
  time?: number
}

/** A committed write that overwrote an account from a read taken before another commit to it. */
export interface LostUpdate {
  account: number
  /** The write whose effect on `account` was overwritten. */
  lost: { worker: string; fence: number; committed: number }
  /** The write that read `account` before `lost` committed, and committed after it. */
  by: { worker: string; fence: number; read: number }
}

export interface Recovery {
  resource: string
  /** ms from the heal to the next successful acquire, or null if none came. */
  ms: number | null
}

/** A stretch of time in which a resource was not acquired although some worker was asking for it. */
export interface Stall {
  resource: string
  from: number
  to: number
  ms: number
  /** Faults active at some point in [from - ttl - 2 s, to] (a dead waiter's place lasts ttl + 2 s): what may explain it. */
  faults: string[]
}

export interface CheckResult {
  ttl: number
  fencing: boolean
  money: { initial: number; final: number; ok: boolean }
  staleAccepted: StaleAccepted[]
  lostUpdates: LostUpdate[]
  /** Pairs of (sql or redis) accepted writes across a restart of the Redis node holding the fenced key: not comparable. */
  redisRestartSkips: number
  overlaps: Overlap[]
  liveness: {
    bound: number
    /** After the final heal, with every worker running. */
    afterHeal: Recovery[]
    /** A fresh client after every worker was killed with -9 (locks and queue places left behind). */
    probes: { resource: string; ok: boolean; waited: number; error?: string }[]
    /** After each fault that ended with no other fault starting within `bound`. */
    afterFaults: { fault: string; id: number; worst: number | null }[]
    /** The longest stretches without an acquisition while a worker waited (informational). */
    stalls: Stall[]
    ok: boolean
  }
  signals: {
    /** Leases whose interval ended without a successful release, excluding killed holders. */
    lost: number
    aborted: number
    /** Lost leases with no abort event. */
    missing: LeaseInterval[]
    /** Of those, leases released well after their own deadline had passed: the expiry timer should have fired first. */
    missingPastDeadline: number
    /**
     * Not judged: the holder was killed, the release outcome is unknown (Redis error), or Redis
     * answered "not held" only after the lease's deadline (the key may have expired meanwhile).
     */
    unjudged: number
    ok: boolean
  }
  leases: LeaseInterval[]
  stats: {
    ops: number
    okOps: number
    transfers: number
    faults: Record<string, number>
    staleRejected: { claim: number; write: number; fset: number }
    acquireFailures: Record<string, number>
    lostByReason: Record<string, number>
    duration: number
  }
  violations: string[]
  ok: boolean
  /** Semaphore mode only (verify/semaphore-checker.ts). */
  semaphore?: SemaphoreCheck
}

const key = (pid: number, resource: string, fence: number | undefined) => `${pid}|${resource}|${fence}`
const bump = (map: Record<string, number>, k: string) => void (map[k] = (map[k] ?? 0) + 1)

export interface CheckInput {
  events: HistoryEvent[]
  final: FinalState
  ttl: number
  fencing: boolean
  /** Index of the Redis node that holds the fenced key (restarts there reset the guard). */
  stateNode?: string
}

/** Reconstructs each lease interval from the history. */
export function leaseIntervals(events: HistoryEvent[], endOfRun: number): LeaseInterval[] {
  const leases = new Map<string, LeaseInterval>()
  const exits = new Map<number, number>()
  for (const e of events) if (e.kind === 'meta' && e.what === 'exit' && e.pid !== undefined) exits.set(e.pid, e.time)
  for (const e of events) {
    if (e.kind === 'op' && e.f === 'acquire' && e.type === 'ok' && e.fence !== undefined) {
      const deadline = (e.value as { deadline?: number } | undefined)?.deadline ?? Number.NaN
      leases.set(key(e.pid, e.resource, e.fence), {
        worker: e.worker, pid: e.pid, resource: e.resource, fence: e.fence, start: e.time, end: Number.NaN, ended: 'open', staleRejected: false, deadline,
      })
    }
  }
  const releaseInvoked = new Map<string, number>()
  for (const e of events) {
    if (e.kind === 'lost') {
      const lease = leases.get(key(e.pid, e.resource, e.fence))
      if (lease && lease.lost === undefined) lease.lost = e
      continue
    }
    if (e.kind !== 'op') continue
    const lease = leases.get(key(e.pid, e.resource, e.fence))
    if (!lease) continue
    if ((e.f === 'write' || e.f === 'claim' || e.f === 'fset') && e.type === 'fail' && e.error === 'stale') lease.staleRejected = true
    if (e.f !== 'release') continue
    if (e.type === 'invoke') releaseInvoked.set(key(e.pid, e.resource, e.fence), e.time)
    // A release that Redis answered "not held" after the lease's deadline may simply have arrived
    // after the key expired (slow network): not a lease lost while it was trusted.
    else if (e.type === 'ok') lease.ended = (e.value as { released?: boolean } | undefined)?.released ? 'released' : e.time > lease.deadline ? 'release-late' : 'release-false'
    else lease.ended = 'release-unknown'
  }
  for (const [k, lease] of leases) {
    const release = releaseInvoked.get(k)
    const lostAt = lease.lost?.time
    const exit = exits.get(lease.pid)
    const candidates = [release, lostAt, exit].filter((t): t is number => t !== undefined)
    lease.end = candidates.length ? Math.min(...candidates) : endOfRun
    if (lease.lost && (release === undefined || lease.lost.time <= release)) lease.ended = 'lost'
    else if (release === undefined && exit !== undefined) lease.ended = 'killed'
    else if (release !== undefined && lease.ended === 'open') lease.ended = exit !== undefined ? 'killed' : 'release-unknown'
  }
  return [...leases.values()].sort((a, b) => a.start - b.start)
}

function overlapsOf(leases: LeaseInterval[]): Overlap[] {
  const out: Overlap[] = []
  const byResource = new Map<string, LeaseInterval[]>()
  for (const lease of leases) byResource.set(lease.resource, [...(byResource.get(lease.resource) ?? []), lease])
  for (const [resource, list] of byResource) {
    for (let i = 0; i < list.length; i++) {
      const a = list[i]!
      for (let j = i + 1; j < list.length && list[j]!.start < a.end; j++) {
        const b = list[j]!
        const ms = Math.min(a.end, b.end) - b.start
        if (ms > 0) out.push({ resource, a, b, ms })
      }
    }
  }
  return out
}

/**
 * Lost updates, found without trusting fences: per account, the ledger gives commit order; a write
 * that committed after write W on the same account but whose read had completed before W even
 * started is built on a value W was about to change.
 */
function lostUpdatesOf(ops: OpEvent[], final: FinalState): LostUpdate[] {
  interface Txn { worker: string; resource: string; fence: number; readOk: number; writeInvoke: number; writeOk: number; accounts: number[] }
  const byLease = new Map<string, Partial<Txn>>()
  for (const e of ops) {
    if (e.fence === undefined || (e.f !== 'read' && e.f !== 'write')) continue
    const k = key(e.pid, e.resource, e.fence)
    const t = byLease.get(k) ?? { worker: e.worker, resource: e.resource, fence: e.fence }
    if (e.f === 'read' && e.type === 'ok') t.readOk = e.time
    if (e.f === 'write' && e.type === 'invoke') t.writeInvoke = e.time
    if (e.f === 'write' && e.type === 'ok') {
      t.writeOk = e.time
      // Transfer mode records one write per account (`account`); the mutex one per transfer.
      const v = e.value as { from: number; to: number; account?: number }
      t.accounts = v.account !== undefined ? [v.account] : [v.from, v.to]
    }
    byLease.set(k, t)
  }
  const txns = [...byLease.values()].filter((t): t is Txn => t.writeOk !== undefined && t.readOk !== undefined && t.writeInvoke !== undefined)
  const seq = new Map<string, number>()
  for (const row of final.ledger) seq.set(`${row.account}|${row.fence}|${row.worker}`, row.seq)
  const out: LostUpdate[] = []
  for (const w of txns) {
    for (const w2 of txns) {
      if (w2 === w || w2.resource !== w.resource || w2.readOk >= w.writeInvoke) continue
      for (const account of w.accounts) {
        if (!w2.accounts.includes(account)) continue
        const a = seq.get(`${account}|${w.fence}|${w.worker}`)
        const b = seq.get(`${account}|${w2.fence}|${w2.worker}`)
        if (a !== undefined && b !== undefined && a < b) {
          out.push({ account, lost: { worker: w.worker, fence: w.fence, committed: w.writeOk }, by: { worker: w2.worker, fence: w2.fence, read: w2.readOk } })
        }
      }
    }
  }
  return out
}

/**
 * Per resource, the gaps between consecutive successful acquisitions (counted from the earlier
 * lease's release or abort) during which at least one worker was waiting throughout; the ten
 * longest, with the faults that overlap them.
 */
export function stallsOf(ops: OpEvent[], faults: FaultEvent[], ttl: number): Stall[] {
  const windows: { from: number; to: number; label: string }[] = []
  for (const f of faults) {
    if (f.phase !== 'start') continue
    const end = faults.find((g) => g.phase === 'end' && g.id === f.id)?.time ?? f.time
    windows.push({ from: f.time, to: end, label: `${f.fault} ${f.target}` })
  }
  const out: Stall[] = []
  const resources = [...new Set(ops.filter((e) => e.worker !== 'probe').map((e) => e.resource))]
  for (const resource of resources) {
    // A worker waits for this resource from its acquire until it gets it or turns to another
    // resource; an acquire that timed out and is retried counts as one long wait.
    const pending = new Map<number, number>() // pid -> waiting since
    let freeSince: number | undefined
    for (const e of ops) {
      if (e.worker === 'probe' || (e.f !== 'acquire' && e.f !== 'release')) continue
      if (e.resource !== resource) {
        if (e.f === 'acquire' && e.type === 'invoke') pending.delete(e.pid)
        continue
      }
      if (e.f === 'acquire' && e.type === 'invoke' && !pending.has(e.pid)) pending.set(e.pid, e.time)
      else if (e.f === 'release' && e.type === 'invoke') freeSince = e.time
      else if (e.f === 'acquire' && e.type === 'ok') {
        const waitingSince = Math.min(...pending.values(), e.time)
        pending.delete(e.pid)
        if (freeSince !== undefined) {
          const from = Math.max(freeSince, waitingSince)
          const ms = e.time - from
          if (ms > 0) {
            const overlapping = windows.filter((w) => w.to >= from - ttl - 2_000 && w.from <= e.time).map((w) => w.label)
            out.push({ resource, from, to: e.time, ms, faults: [...new Set(overlapping)] })
          }
        }
        freeSince = undefined
      }
    }
  }
  return out.sort((a, b) => b.ms - a.ms).slice(0, 10)
}

export function check(input: CheckInput): CheckResult {
  const { events, final, ttl } = input
  const ops = events.filter((e): e is OpEvent => e.kind === 'op')
  const faults = events.filter((e): e is FaultEvent => e.kind === 'fault')
  const violations: string[] = []

  // (a) money, and fences of accepted writes never going backwards.
  const finalTotal = final.accounts.reduce((sum, a) => sum + a.balance, 0)
  const money = { initial: final.initialTotal, final: finalTotal, ok: finalTotal === final.initialTotal }
  if (!money.ok) violations.push(`(a) money not conserved: ${final.initialTotal} before, ${finalTotal} after (${finalTotal - final.initialTotal > 0 ? '+' : ''}${finalTotal - final.initialTotal})`)

  const staleAccepted: StaleAccepted[] = []
  const highest = new Map<number, number>()
  for (const row of final.ledger) {
    const max = highest.get(row.account) ?? -Infinity
    if (row.fence < max) staleAccepted.push({ store: 'sql', where: `account ${row.account}`, fence: row.fence, after: max })
    highest.set(row.account, Math.max(max, row.fence))
  }
  // Redis: a write that started after another one was acknowledged was applied after it.
  const stateNode = input.stateNode ?? 'redis0'
  const restarts = faults.filter((f) => f.fault === 'kill-redis' && f.target === stateNode && f.phase === 'start').map((f) => f.time)
  const fsetInvoke = new Map<string, number>()
  const accepted: { resource: string; fence: number; invoke: number; ok: number }[] = []
  for (const e of ops) {
    if (e.f !== 'fset') continue
    const k = key(e.pid, e.resource, e.fence)
    if (e.type === 'invoke') fsetInvoke.set(k, e.time)
    else if (e.type === 'ok' && e.fence !== undefined) accepted.push({ resource: e.resource, fence: e.fence, invoke: fsetInvoke.get(k) ?? e.time, ok: e.time })
  }
  let redisRestartSkips = 0
  for (const w2 of accepted) {
    let worst: (typeof accepted)[number] | undefined
    for (const w1 of accepted) {
      if (w1.resource !== w2.resource || w1.ok >= w2.invoke || w1.fence <= w2.fence) continue
      // The guard key lives in Redis memory: a restart in between wiped it together with the data.
      if (restarts.some((t) => t > w1.invoke && t < w2.invoke)) {
        redisRestartSkips++
        continue
      }
      if (!worst || w1.fence > worst.fence) worst = w1
    }
    if (worst) staleAccepted.push({ store: 'redis', where: w2.resource, fence: w2.fence, after: worst.fence, time: w2.ok })
  }
  const lostUpdates = lostUpdatesOf(ops, final)
  if (lostUpdates.length) violations.push(`(a) ${lostUpdates.length} committed writes overwrote an account from a read taken before another holder's write to it committed (lost updates)`)
  if (staleAccepted.length) {
    const sql = staleAccepted.filter((s) => s.store === 'sql').length
    violations.push(`(a) ${staleAccepted.length} accepted writes carried a fence lower than one accepted before (${sql} in SQL, ${staleAccepted.length - sql} in Redis)`)
  }

  // (b) overlaps, as each holder saw its lease.
  const end = final.end
  const leases = leaseIntervals(events, end)
  const overlaps = overlapsOf(leases)

  // (c) liveness.
  const bound = ttl + 500
  const acquiredAt = new Map<string, number[]>()
  for (const e of ops) if (e.f === 'acquire' && e.type === 'ok') acquiredAt.set(e.resource, [...(acquiredAt.get(e.resource) ?? []), e.time])
  const resources = [...new Set(final.probes.map((p) => p.resource))]
  const firstAfter = (resource: string, t: number): number | null => {
    const next = (acquiredAt.get(resource) ?? []).find((x) => x >= t)
    return next === undefined ? null : next - t
  }
  const afterHeal = resources.map((resource) => ({ resource, ms: firstAfter(resource, final.healedAt) }))
  const starts = faults.filter((f) => f.phase === 'start').map((f) => f.time)
  const afterFaults = faults
    .filter((f) => f.phase === 'end' && !starts.some((s) => s > f.time && s < f.time + bound))
    .map((f) => {
      const each = resources.map((r) => firstAfter(r, f.time))
      return { fault: f.fault, id: f.id, worst: each.some((x) => x === null) ? null : Math.max(...(each as number[])) }
    })
  const stalls = stallsOf(ops, faults, ttl)
  const livenessOk = afterHeal.every((r) => r.ms !== null && r.ms <= bound) && final.probes.every((p) => p.ok && p.waited <= bound)
  for (const r of afterHeal) {
    if (r.ms === null) violations.push(`(c) ${r.resource} was never acquired after the faults healed`)
    else if (r.ms > bound) violations.push(`(c) ${r.resource} was first acquired ${Math.round(r.ms)} ms after the faults healed (bound ${bound} ms)`)
  }
  for (const p of final.probes) {
    if (!p.ok) violations.push(`(c) a fresh client could not acquire ${p.resource} after every worker was killed: ${p.error}`)
    else if (p.waited > bound) violations.push(`(c) a fresh client waited ${Math.round(p.waited)} ms for ${p.resource} after every worker was killed with -9 (bound ${bound} ms)`)
  }

  // (d) every lease that ended without a successful release was signalled.
  const lostLeases = leases.filter((l) => l.ended === 'lost' || l.ended === 'release-false')
  const missing = lostLeases.filter((l) => !l.lost)
  const unjudged = leases.filter((l) => l.ended === 'killed' || l.ended === 'release-unknown' || l.ended === 'release-late' || l.ended === 'open').length
  // 20 ms of slack: a release called a moment after the deadline, before the expiry timer got its
  // turn in the event loop, is scheduling jitter, not a timer that failed to fire.
  const missingPastDeadline = missing.filter((l) => l.end > l.deadline + 20).length
  if (missing.length) {
    violations.push(
      `(d) ${missing.length} of ${lostLeases.length} lost leases never had their signal aborted ` +
        `(${missing.length - missingPastDeadline} found gone by release() before their deadline, ${missingPastDeadline} released after it)`,
    )
  }

  const faultCounts: Record<string, number> = {}
  for (const f of faults) if (f.phase === 'start') bump(faultCounts, f.fault)
  const acquireFailures: Record<string, number> = {}
  for (const e of ops) if (e.f === 'acquire' && e.type === 'fail') bump(acquireFailures, (e.error ?? 'unknown').split(':')[0]!)
  const lostByReason: Record<string, number> = {}
  for (const e of events) if (e.kind === 'lost') bump(lostByReason, e.reason)
  const staleCount = (f: string) => ops.filter((e) => e.f === f && e.type === 'fail' && e.error === 'stale').length

  return {
    ttl,
    fencing: input.fencing,
    money,
    staleAccepted,
    lostUpdates,
    redisRestartSkips,
    overlaps,
    liveness: { bound, afterHeal, probes: final.probes, afterFaults, stalls, ok: livenessOk },
    signals: { lost: lostLeases.length, aborted: lostLeases.length - missing.length, missing, missingPastDeadline, unjudged, ok: missing.length === 0 },
    leases,
    stats: {
      ops: ops.filter((e) => e.type === 'invoke' && e.worker !== 'probe').length,
      okOps: ops.filter((e) => e.type === 'ok' && e.worker !== 'probe').length,
      // Transfer mode writes once per account: count each transfer at its debited account.
      transfers: ops.filter((e) => {
        const v = e.value as { from?: number; account?: number } | undefined
        return e.f === 'write' && e.type === 'ok' && (v?.account === undefined || v.account === v.from)
      }).length,
      faults: faultCounts,
      staleRejected: { claim: staleCount('claim'), write: staleCount('write'), fset: staleCount('fset') },
      acquireFailures,
      lostByReason,
      duration: end - (events[0]?.time ?? end),
    },
    violations,
    ok: violations.length === 0,
  }
}
