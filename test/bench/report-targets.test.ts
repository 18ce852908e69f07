import { describe, expect, it } from 'vitest'
import type { LatencyRow } from '../../bench/latency.js'
import { targets } from '../../bench/report-targets.js'
import type { Results } from '../../bench/results.js'

const row = (lib: LatencyRow['lib'], promisesPerCycle: number): LatencyRow => ({
  lib,
  label: lib,
  cyclesPerSec: 1_000,
  acquireP50: 0.1,
  acquireP99: 0.2,
  releaseP50: 0.1,
  releaseP99: 0.2,
  wirePerCycle: 2,
  clientCpuUsPerCycle: 100,
  redisCpuUsPerCycle: 100,
  promisesPerCycle,
  rounds: [1_000],
})

const results = (fencelock: number, seed: number): Results =>
  ({ machine: {}, notRun: [], errors: [], A: [row('fencelock', fencelock), row('seed', seed)] }) as unknown as Results

const promiseTarget = (r: Results) => targets(r).find((t) => t.id === 'A' && t.target.startsWith('promises per cycle'))

describe('bench targets: promises per A cycle', () => {
  // The counts are whole promises over MADE_CYCLES cycles (one more over the run is counted for every
  // library alike: 11.002 and 7.002 over 500 cycles), so their difference must be judged exactly,
  // not as the floating-point 4.000000000000001.
  it('passes at exactly 4 more than the seed, as counted over a run of 500 cycles', () => {
    expect(promiseTarget(results(5501 / 500, 3501 / 500))?.pass).toBe(true)
  })

  it('fails at one promise more than that over the run', () => {
    expect(promiseTarget(results(5502 / 500, 3501 / 500))?.pass).toBe(false)
  })
})
