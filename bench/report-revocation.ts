// V's table and target (bench/revocation.ts measures it).
import { fmt } from './stats.js'
import type { Results, Table, Target } from './results.js'
import { REVOKE_P99_TARGET_MS } from './revocation.js'

export function revocationTables(r: Results): Table[] {
  if (!r.V?.length) return []
  return [
    {
      title: "V. Revocation: from the operator's revoke() to the holder's signal aborting (reason revoked), one at a time",
      head: ['topology', 'revocations', 'p50 ms', 'p99 ms', 'max ms', 'unheard', 'reason revoked'],
      rows: r.V.map((v) => [v.topology, String(v.revocations), fmt(v.p50), fmt(v.p99), fmt(v.max), String(v.unheard), v.reasonsRevoked ? 'all' : 'NOT all']),
    },
  ]
}

export function revocationTargets(r: Results): Target[] {
  return (r.V ?? []).map((v) => ({
    id: 'V',
    target: `${v.topology}: a revoked holder hears it within ${REVOKE_P99_TARGET_MS} ms at p99`,
    measured: `p99 ${fmt(v.p99)} ms (p50 ${fmt(v.p50)}, max ${fmt(v.max)}) over ${v.revocations}; unheard ${v.unheard}`,
    pass: v.p99 <= REVOKE_P99_TARGET_MS && v.unheard === 0 && v.reasonsRevoked,
  }))
}
