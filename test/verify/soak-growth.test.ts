// The soak's flatness verdict (verify/soak-samples.ts): each series from minute 5 to the end, RSS by
// its trend over the second half, a node's memory less its script cache.
import { describe, expect, it } from 'vitest'
import { growthOf, type MinuteSample, trendGrowth } from '../../verify/soak-samples.js'

const MiB = 2 ** 20

/** A 60-minute run of one worker and one node whose RSS at minute m is `rss(m)` and node memory `memory(m)`. */
function run(rss: (m: number) => number, memory: (m: number) => number = () => 2 * MiB, scripts: (m: number) => number = () => 0): MinuteSample[] {
  return Array.from({ length: 61 }, (_, minute) => ({
    minute,
    workers: { w0: { kind: 'sample', worker: 'w0', pid: 1, time: minute, heapUsed: 17 * MiB, rss: rss(minute), handles: 4, timers: 1, subscribers: 1 } },
    nodes: { 'cluster node 0': { usedMemory: memory(minute) + scripts(minute), keys: 3, runId: 'a', parts: { used_memory_scripts_eval: scripts(minute) } } },
  }))
}

const verdictOf = (samples: MinuteSample[], series: string) => growthOf(samples, 60).find((g) => g.series.startsWith(series))!

describe('the soak growth verdict', () => {
  it('trendGrowth is the median slope of the pairs of points, projected over the span, as a share of their median', () => {
    expect(
      trendGrowth(
        [
          [30, 100],
          [40, 110],
          [50, 120],
        ],
        55,
      ),
    ).toBeCloseTo((1 * 55) / 110)
    expect(
      trendGrowth(
        [
          [30, 100],
          [40, 100],
        ],
        55,
      ),
    ).toBe(0)
    expect(trendGrowth([[30, 100]], 55)).toBe(0)
  })

  it('fails RSS that grows at a constant rate (a leak: 2 MiB a minute)', () => {
    const g = verdictOf(
      run((m) => 100 * MiB + 2 * MiB * m),
      'w0 rss',
    )
    expect(g.ok).toBe(false)
    expect(g.growth).toBeGreaterThan(0.5)
  })

  it('passes RSS that climbs to a plateau by mid-run, though minute 60 reads 25% above minute 5', () => {
    const g = verdictOf(
      run((m) => (m < 25 ? 104 * MiB + 1.1 * MiB * (m - 5) : 130 * MiB) + (m % 2) * 0.5 * MiB),
      'w0 rss',
    )
    expect(g.end / g.base).toBeGreaterThan(1.2)
    expect(g.ok).toBe(true)
  })

  it('passes a plateau with a single minute read 25 MiB low at the start of the second half', () => {
    expect(
      verdictOf(
        run((m) => (m === 31 ? 105 * MiB : 130 * MiB)),
        'w0 rss',
      ).ok,
    ).toBe(true)
  })

  it('fails RSS still climbing slowly through the second half (5 MiB over its last 30 minutes)', () => {
    expect(
      verdictOf(
        run((m) => 120 * MiB + (m > 30 ? (5 * MiB * (m - 30)) / 30 : 0)),
        'w0 rss',
      ).ok,
    ).toBe(false)
  })

  it("judges a node's memory less its script cache, which the first run of each script there fills once", () => {
    const samples = run(
      () => 100 * MiB,
      () => 2 * MiB,
      (m) => (m < 20 ? 8_000 : 160_000),
    )
    expect(verdictOf(samples, 'cluster node 0 used_memory less scripts').ok).toBe(true)
    expect(
      verdictOf(
        run(
          () => 100 * MiB,
          (m) => 2 * MiB + m * 4_000,
        ),
        'cluster node 0 used_memory less scripts',
      ).ok,
    ).toBe(false)
  })

  it('does not judge a node promoted since the base (a replica that became the primary), nor one restarted', () => {
    const samples = run(
      () => 100 * MiB,
      (m) => (m < 30 ? 2 : 3) * MiB,
    )
    for (const s of samples) s.nodes['cluster node 0']!.role = s.minute < 30 ? 'slave' : 'master'
    expect(verdictOf(samples, 'cluster node 0 used_memory')).toBeUndefined()
    samples[60]!.nodes['cluster node 0']!.role = 'slave'
    samples[60]!.nodes['cluster node 0']!.runId = 'b'
    expect(verdictOf(samples, 'cluster node 0 used_memory')).toBeUndefined()
  })

  it("judges a cluster's keys over all its masters: a migrated slot moves keys from one to another", () => {
    const samples = run(() => 100 * MiB)
    for (const s of samples) s.nodes['cluster node 1'] = { ...s.nodes['cluster node 0']!, keys: 1 }
    for (const s of samples.slice(30)) Object.assign(s.nodes['cluster node 0']!, { keys: 1 }) && Object.assign(s.nodes['cluster node 1']!, { keys: 3 })
    expect(verdictOf(samples, 'cluster node 1 keys')).toBeUndefined()
    expect(verdictOf(samples, 'cluster keys (all masters)')).toMatchObject({ base: 4, end: 4, ok: true })
    samples[60]!.nodes['cluster node 1']!.keys = 7
    expect(verdictOf(samples, 'cluster keys (all masters)').ok).toBe(false)
  })

  it('still judges the heap after a full GC from its minute-5 reading', () => {
    const samples = run(() => 100 * MiB)
    samples[60]!.workers.w0!.heapUsed = 18 * MiB
    expect(verdictOf(samples, 'w0 heap used').ok).toBe(false)
  })
})
