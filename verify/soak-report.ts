// The soak's report, in Markdown: the verdict, the operations, the faults, what was lost and why,
// the longest waits, and every per-minute sample with the growth from the base minute to the end.
import type { SoakFault, WindowCheck } from './soak-check.js'
import { WAIT_SLACK_MS } from './soak-check.js'
import { baseMinute, COUNT_NOISE, growthOf, MAX_GROWTH, memoryLessScripts, type MinuteSample } from './soak-samples.js'

export interface SoakResult {
  minutes: number
  started: Date
  samples: MinuteSample[]
  checks: WindowCheck[]
  faults: SoakFault[]
  ops: Map<string, number>
  workerErrors: Map<string, number>
  crashes: string[]
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1)
const mib2 = (bytes: number) => (bytes / 2 ** 20).toFixed(2)
/** What of a worker's heap after its full GC is compiled code (bytecode lives in old space and is not counted here). */
const codeOf = (x: { spacesUsed?: Record<string, number> }) =>
  x.spacesUsed === undefined ? '' : mib2((x.spacesUsed.code_space ?? 0) + (x.spacesUsed.code_large_object_space ?? 0))
const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : 'from 0')

function verdict(r: SoakResult): { lines: string[]; pass: boolean } {
  const violations = [...new Set(r.checks.flatMap((c) => c.violations))]
  const overBound = r.checks.reduce((n, c) => n + c.overBound, 0)
  const longest = r.checks.map((c) => c.longestWait).reduce((a, b) => (b.ms > a.ms ? b : a), { ms: 0, resource: '', worker: '', outcome: '' })
  const growth = growthOf(r.samples, r.minutes)
  const grown = growth.filter((g) => !g.ok)
  const base = baseMinute(r.minutes)
  // A fault left half-applied (a node killed and not back) changes what the rest of the run tests.
  const failed = r.faults.filter((f) => f.failed !== undefined)
  // Flat after the first 5 minutes (issue 45): judged from minute 5, so only on runs of 10 minutes or more.
  const judged = r.minutes >= 10
  const lines = [
    `- Safety: ${violations.length === 0 ? 'no violation' : `${violations.length} violation(s):`}`,
    ...violations.slice(0, 20).map((v) => `  - ${v}`),
    `- Waits: longest ${Math.round(longest.ms)} ms (${longest.resource}, ${longest.worker}, ${longest.outcome}); bound wait + ${WAIT_SLACK_MS} ms; ${overBound} beyond it`,
    `- Growth from minute ${base} to minute ${r.samples.at(-1)?.minute ?? 0}${judged ? '' : ' (reported, not judged: a run shorter than 10 minutes cannot tell growth from warm-up; compared from its middle sample, not minute 5)'}: ${grown.length === 0 ? `none over ${pct(MAX_GROWTH)}` : `${grown.length} series over ${pct(MAX_GROWTH)}: ${grown.map((g) => `${g.series} ${pct(g.growth)}`).join('; ')}`}${growth.length === 0 ? ' (not enough samples to compare)' : ''}`,
    `- Worker processes that died on their own: ${r.crashes.length}`,
    `- Faults that could not be applied or undone: ${failed.length === 0 ? 'none' : `${failed.length}:`}`,
    ...failed.map((f) => `  - ${f.label}: ${f.failed}`),
  ]
  const flat = !judged || (grown.length === 0 && growth.length > 0)
  return { lines, pass: violations.length === 0 && overBound === 0 && flat && r.crashes.length === 0 && failed.length === 0 }
}

function lostLines(r: SoakResult): string[] {
  const lost = r.checks.flatMap((c) => c.lost)
  const byCause = new Map<string, number>()
  for (const l of lost) {
    const key = `${l.resource.slice(0, l.resource.indexOf(':'))}: ${l.reason}${l.atRelease ? ' at its release' : ''}, ${l.fault ? `after ${l.fault}` : 'with no fault on its topology'}`
    byCause.set(key, (byCause.get(key) ?? 0) + 1)
  }
  return [`Leases lost: ${lost.length}`, '', ...[...byCause].sort().map(([k, n]) => `- ${n} ${k}`)]
}

function sampleTable(r: SoakResult): string[] {
  const workers = [...new Set(r.samples.flatMap((s) => Object.keys(s.workers)))].sort()
  const nodes = [...new Set(r.samples.flatMap((s) => Object.keys(s.nodes)))]
  const lines = [
    '| minute | worker | heap used MiB | of it code spaces MiB | heap reserved MiB | RSS MiB | handles | timers | subscriber conns |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ]
  for (const s of r.samples)
    for (const w of workers) {
      const x = s.workers[w]
      lines.push(
        x
          ? `| ${s.minute} | ${w} | ${mib2(x.heapUsed)} | ${codeOf(x)} | ${x.heapTotal === undefined ? '' : mib(x.heapTotal)} | ${mib(x.rss)} | ${x.handles} | ${x.timers} | ${x.subscribers} |`
          : `| ${s.minute} | ${w} | no answer | | | | | | |`,
      )
    }
  lines.push('', '| minute | node | role | used_memory MiB | less scripts MiB | cached scripts | keys |', '| --- | --- | --- | --- | --- | --- | --- |')
  for (const s of r.samples)
    for (const n of nodes) {
      const x = s.nodes[n]
      lines.push(
        x
          ? `| ${s.minute} | ${n} | ${x.role ?? ''} | ${mib(x.usedMemory)} | ${mib(memoryLessScripts(x))} | ${x.parts?.number_of_cached_scripts ?? ''} | ${x.keys} |`
          : `| ${s.minute} | ${n} | no answer | | | | |`,
      )
    }
  return lines
}

export function renderSoakReport(r: SoakResult): { text: string; pass: boolean } {
  const { lines, pass } = verdict(r)
  const growth = growthOf(r.samples, r.minutes)
  const text = [
    `# Soak: ${r.minutes} minutes, ${pass ? 'PASS' : 'FAIL'}`,
    '',
    `Started ${r.started.toISOString()}. Workers w0-w1: primary with a replica behind Sentinels (replicas: 1), w2-w3: 3-master cluster, w4-w5: quorum of 3; even slots ioredis, odd node-redis. Each runs a mutex, a semaphore (limit 3, 1-2 permits), a read/write lock, acquireAll of two accounts in either order and an election, at once.`,
    '',
    ...lines,
    '',
    `Leases granted: ${[...r.ops].map(([k, n]) => `${k} ${n}`).join(', ')}`,
    '',
    `Faults (${r.faults.length}): ${r.faults.map((f) => f.label).join('; ')}`,
    '',
    ...lostLines(r),
    '',
    `Errors the workers' loops saw (by message): ${[...r.workerErrors].map(([k, n]) => `${n}x ${k}`).join('; ') || 'none'}`,
    '',
    '## Samples',
    '',
    ...sampleTable(r),
    '',
    `## Growth (base minute ${baseMinute(r.minutes)}; counts may rise by ${COUNT_NOISE}: what stayed in flight through all their readings; RSS by the trend of the second half; a node restarted or promoted since the base is not judged)`,
    '',
    '| series | base | end | growth | ok |',
    '| --- | --- | --- | --- | --- |',
    ...growth.map((g) => `| ${g.series} | ${g.base} | ${g.end} | ${pct(g.growth)} | ${g.ok ? 'yes' : 'NO'} |`),
    ...r.crashes.map((c) => `- crash: ${c}`),
    '',
  ].join('\n')
  return { text, pass }
}
