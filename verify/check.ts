// Checks a recorded history again: `npx tsx verify/check.ts .verify/<run>/history-fenced.jsonl`.
// Prints the verdict lines, the violations and the longest stalls; exits 1 on a violation.
import { readFileSync } from 'node:fs'
import { check } from './checker.js'
import { checkElection } from './election-checker.js'
import { checkSemaphore } from './semaphore-checker.js'
import { readHistory } from './history.js'
import { verdictLines } from './report.js'
import { finalStatePath, type FinalState } from './run.js'

const historyPath = process.argv[2]
if (!historyPath) {
  console.error('usage: npx tsx verify/check.ts <history.jsonl>')
  process.exit(2)
}
const saved = JSON.parse(readFileSync(finalStatePath(historyPath), 'utf8')) as {
  ttl: number
  fencing: boolean
  /** Failover mode: double grants are checked too. */
  failover?: boolean
  final: FinalState
  primitive?: 'semaphore' | 'multi' | 'election'
  semaphore?: { limit: number }
  nodes?: number
}
const result =
  saved.primitive === 'election'
    ? checkElection({ events: readHistory(historyPath), final: saved.final, ttl: saved.ttl, fencing: saved.fencing })
    : saved.primitive === 'semaphore' && saved.semaphore
      ? checkSemaphore({
          events: readHistory(historyPath),
          final: saved.final,
          ttl: saved.ttl,
          fencing: saved.fencing,
          limit: saved.semaphore.limit,
          nodes: saved.nodes ?? 1,
        })
      : check({ events: readHistory(historyPath), final: saved.final, ttl: saved.ttl, fencing: saved.fencing, ...(saved.failover ? { exclusive: true } : {}) })
const t0 = readHistory(historyPath)[0]?.time ?? 0
for (const v of verdictLines(result)) console.log(`${v.ok === null ? 'info' : v.ok ? ' ok ' : 'FAIL'} ${v.label}: ${v.text}`)
for (const v of result.violations) console.log(`! ${v}`)
console.log('longest stalls (resource free, someone waiting, no acquisition):')
for (const s of result.liveness.stalls) {
  console.log(`  ${s.resource} ${Math.round(s.ms)} ms from ${((s.from - t0) / 1000).toFixed(3)} s; faults around it: ${s.faults.join(', ') || 'none'}`)
}
for (const l of result.signals.missing) {
  console.log(
    `  unsignalled: ${l.worker} ${l.resource} fence ${l.fence} at ${((l.start - t0) / 1000).toFixed(3)} s for ${Math.round(l.end - l.start)} ms, ${l.ended}`,
  )
}
process.exit(result.ok ? 0 : 1)
