// Liveness, judged alike for every primitive: how soon the resource was taken again after the
// faults healed and after each fault that ended alone, and the longest stretches nobody got it.
import type { CheckResult, Recovery, Stall } from './check-result.js'
import type { FaultEvent, OpEvent } from './history.js'

/**
 * How long after the heal (or a quiet fault's end) the resource must have been taken again, ms:
 * one ttl (a paused holder's lease runs out) and a second for reconnect back-off and scheduling on
 * a loaded machine (a quick run beside another test file took 1,562 ms with a 1 s ttl, against
 * 290 ms alone on the same machine). A waiter that sleeps past the holder's ttl, or until its own
 * wait ends, still exceeds it.
 */
export const livenessBound = (ttl: number): number => ttl + 1_000

/** The ends of the faults that no other fault followed within `bound`: each a moment to recover from. */
export function quietFaultEnds(faults: FaultEvent[], bound: number): FaultEvent[] {
  const starts = faults.filter((f) => f.phase === 'start').map((f) => f.time)
  return faults.filter((f) => f.phase === 'end' && !starts.some((s) => s > f.time && s < f.time + bound))
}

/** Every resource taken again within the bound after the heal, and every probe served within it. */
export function recoveredInTime(afterHeal: Recovery[], probes: CheckResult['liveness']['probes'], bound: number): boolean {
  return afterHeal.every((r) => r.ms !== null && r.ms <= bound) && probes.every((p) => p.ok && p.waited <= bound)
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
