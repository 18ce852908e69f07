// (d) for every primitive: a lease (or permit) that ended without a successful release must have
// had its signal aborted first.
import type { CheckResult, LeaseInterval } from './check-result.js'

/** Lost leases, those of them never signalled, and those not judged. */
export function signalsOf(leases: LeaseInterval[]): CheckResult['signals'] {
  const lostLeases = leases.filter((l) => l.ended === 'lost' || l.ended === 'release-false')
  const missing = lostLeases.filter((l) => !l.lost)
  const unjudged = leases.filter((l) => l.ended === 'killed' || l.ended === 'release-unknown' || l.ended === 'release-late' || l.ended === 'open').length
  // 20 ms of slack: a release called a moment after the deadline, before the expiry timer got its
  // turn in the event loop, is scheduling jitter, not a timer that failed to fire.
  const missingPastDeadline = missing.filter((l) => l.end > l.deadline + 20).length
  return { lost: lostLeases.length, aborted: lostLeases.length - missing.length, missing, missingPastDeadline, unjudged, ok: missing.length === 0 }
}

/** The violation (d) when some lost `noun` ('leases', 'permits') were never signalled. */
export function signalViolation(signals: CheckResult['signals'], noun: string): string | undefined {
  const { missing, lost, missingPastDeadline } = signals
  if (!missing.length) return undefined
  return `(d) ${missing.length} of ${lost} lost ${noun} never had their signal aborted (${missing.length - missingPastDeadline} found gone by release() before their deadline, ${missingPastDeadline} released after it)`
}
