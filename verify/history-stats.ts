// The figures of a run that every checker reports alike: operations, faults by kind, acquire
// failures by code, lost signals by reason, the run's length.
import type { FaultEvent, HistoryEvent, OpEvent } from './history.js'

export interface HistoryStats {
  ops: number
  okOps: number
  faults: Record<string, number>
  acquireFailures: Record<string, number>
  lostByReason: Record<string, number>
  duration: number
}

const bump = (map: Record<string, number>, k: string) => void (map[k] = (map[k] ?? 0) + 1)

export function historyStats(events: HistoryEvent[], ops: OpEvent[], faults: FaultEvent[], end: number): HistoryStats {
  const faultCounts: Record<string, number> = {}
  for (const f of faults) if (f.phase === 'start') bump(faultCounts, f.fault)
  const acquireFailures: Record<string, number> = {}
  for (const e of ops) if (e.f === 'acquire' && e.type === 'fail') bump(acquireFailures, (e.error ?? 'unknown').split(':')[0]!)
  const lostByReason: Record<string, number> = {}
  for (const e of events) if (e.kind === 'lost') bump(lostByReason, e.reason)
  return {
    ops: ops.filter((e) => e.type === 'invoke' && e.worker !== 'probe').length,
    okOps: ops.filter((e) => e.type === 'ok' && e.worker !== 'probe').length,
    faults: faultCounts,
    acquireFailures,
    lostByReason,
    duration: end - (events[0]?.time ?? end),
  }
}
