// The soak's verdict on its faults: one that could not be applied or undone (a node that did not
// come back) fails the run and is named, since the rest of the run tested less than it says.
import { describe, expect, it } from 'vitest'
import type { SoakFault } from '../../verify/soak-check.js'
import { renderSoakReport, type SoakResult } from '../../verify/soak-report.js'

const result = (faults: SoakFault[]): SoakResult => ({
  minutes: 2,
  started: new Date(0),
  samples: [],
  checks: [],
  faults,
  ops: new Map([['single', 10]]),
  workerErrors: new Map(),
  crashes: [],
})

describe('the soak report', () => {
  const applied: SoakFault = { topology: 'quorum', label: 'quorum fault 1: node 2 killed, restarted empty', start: 0, end: 1 }

  it('passes a run whose faults were all applied', () => {
    const { text, pass } = renderSoakReport(result([applied]))
    expect(pass).toBe(true)
    expect(text).toContain('Faults that could not be applied or undone: none')
  })

  it('fails a run with a fault that could not be undone, and says which and why', () => {
    const failed: SoakFault = { topology: 'quorum', label: 'quorum fault 2', start: 1, end: 2, failed: 'restart of redis-server on port 40001 failed 3 times' }
    const { text, pass } = renderSoakReport(result([applied, failed]))
    expect(pass).toBe(false)
    expect(text).toMatch(/^# Soak: 2 minutes, FAIL/)
    expect(text).toContain('  - quorum fault 2: restart of redis-server on port 40001 failed 3 times')
  })
})
