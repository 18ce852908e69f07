// The HTML report: one self-contained file, no scripts, no external assets. Per run: the verdict,
// then a timeline (SVG) with a lane per worker: lease intervals labelled with their fence, faults
// as shaded bands, stale writes the resource refused, and the moments signals aborted.
import type { CheckResult, ElectionCheck, SemaphoreCheck } from './check-result.js'
import type { HistoryEvent } from './history.js'
import type { RunResult } from './run.js'
import { esc, FAULT_COLORS, ms, timeline } from './timeline.js'

export interface ReportRun {
  run: RunResult
  check: CheckResult
  /** What this run had to show: 'safe' (fenced) or 'violations' (control). */
  expect: 'safe' | 'violations'
}

export interface ReportInput {
  title: string
  command: string
  seed: number
  mode: string
  runs: ReportRun[]
  historyPaths: string[]
}

/** Pass/fail lines for one run, the same text the terminal summary prints. */
export function verdictLines(check: CheckResult): { label: string; ok: boolean | null; text: string }[] {
  if (check.semaphore) return semaphoreVerdictLines(check, check.semaphore)
  if (check.election) return electionVerdictLines(check, check.election)
  const s = check.stats
  const afterHeal = check.liveness.afterHeal.map((r) => `${r.resource} ${r.ms === null ? 'never' : ms(r.ms)}`).join(', ')
  const probes = check.liveness.probes.map((p) => `${p.resource} ${p.ok ? ms(p.waited) : 'failed'}`).join(', ')
  const stall = check.liveness.stalls[0]
  const fencesOff = (check.fenceOrder?.regressions ?? 0) + (check.fenceOrder?.duplicates ?? 0) > 0
  return [
    {
      label: '(a) safety',
      ok: check.money.ok && check.staleAccepted.length === 0 && check.lostUpdates.length === 0 && !fencesOff,
      text:
        `money ${check.money.initial} → ${check.money.final}${check.money.ok ? ' (conserved)' : ` (${check.money.final - check.money.initial > 0 ? '+' : ''}${check.money.final - check.money.initial})`}; ` +
        `${check.staleAccepted.length} accepted writes with a lower fence than one accepted before; ${check.lostUpdates.length} lost updates; ` +
        `stale writes rejected: ${s.staleRejected.claim} claims, ${s.staleRejected.write} SQL writes, ${s.staleRejected.fset} fencedSet` +
        (check.fenceOrder
          ? `; ${check.fenceOrder.regressions} leases with a fence not above an earlier grant, ${check.fenceOrder.duplicates} fences twice`
          : ''),
    },
    {
      label: '(b) overlaps',
      ok: null,
      text:
        `${check.overlaps.length} overlapping lease pairs as the holders saw them (expected under pauses)` +
        (check.overlaps.length ? `, longest ${ms(Math.max(...check.overlaps.map((o) => o.ms)))}` : '') +
        (check.doubleGrantsExcused?.length
          ? `; ${check.doubleGrantsExcused.length} locks granted again within the first lease's deadline after the server clock jumped forward (keys expire early: not counted as double grants, the fences judge them)`
          : ''),
    },
    {
      label: '(c) liveness',
      ok: check.liveness.ok,
      text:
        `first acquire after the final heal: ${afterHeal} (bound ${ms(check.liveness.bound)}); fresh client after kill -9 of every worker: ${probes}` +
        (stall
          ? `; longest stall (free, someone waiting, not acquired): ${ms(stall.ms)} on ${stall.resource} around ${stall.faults.join(', ') || 'no fault'}`
          : ''),
    },
    {
      label: '(d) signals',
      ok: check.signals.ok,
      text: `${check.signals.aborted} of ${check.signals.lost} lost leases had their signal aborted; ${check.signals.unjudged} not judged (holder killed, release outcome unknown, or "not held" answered after the deadline)`,
    },
  ]
}

function semaphoreVerdictLines(check: CheckResult, sem: SemaphoreCheck): { label: string; ok: boolean | null; text: string }[] {
  const afterHeal = check.liveness.afterHeal.map((r) => `${r.resource} ${r.ms === null ? 'never' : ms(r.ms)}`).join(', ')
  const probes = check.liveness.probes.map((p) => (p.ok ? ms(p.waited) : 'failed')).join(', ')
  const stall = check.liveness.stalls[0]
  const excused = sem.excused.length
    ? `; ${sem.excused.length} more stretches not judged (a permit granted before the single Redis node restarted empty or its clock jumped forward)`
    : ''
  return [
    {
      label: '(a) limit',
      ok: sem.excess.length === 0 && sem.insideExcess.length === 0,
      text:
        `at most ${sem.maxBelieved} permits believed valid at once (limit ${sem.limit}), ${sem.excess.length} stretches over the limit${excused}; ` +
        `at most ${sem.maxInside} holders inside the protected work at once, ${sem.insideExcess.length} stretches over the limit`,
    },
    {
      label: '(a) work on lost permits',
      ok: sem.workOnLost.length === 0,
      text: `${sem.workOnLost.length} of ${sem.units} units of work begun after their permit's deadline or its signal's abort; extends ${sem.extends.ok} ok, ${sem.extends.failed} failed`,
    },
    {
      label: '(a) fences',
      ok: sem.fenceRegressions.length === 0 && sem.duplicateFences.length === 0,
      text: `${sem.fenceRegressions.length} permits with a fence not above one granted before they asked; ${sem.duplicateFences.length} fences handed out twice`,
    },
    {
      label: '(b) overlaps',
      ok: null,
      text:
        `${check.overlaps.length} stretches with more than ${sem.limit} permits as their holders saw them, deadlines ignored (expected under pauses)` +
        (check.overlaps.length ? `, longest ${ms(Math.max(...check.overlaps.map((o) => o.ms)))}` : ''),
    },
    {
      label: '(c) liveness',
      ok: check.liveness.ok,
      text:
        `first permit after the final heal: ${afterHeal} (bound ${ms(check.liveness.bound)}); fresh client, every permit after kill -9 of every worker: ${probes}` +
        (stall ? `; longest stall (a release, someone waiting, no grant): ${ms(stall.ms)} around ${stall.faults.join(', ') || 'no fault'}` : ''),
    },
    {
      label: '(d) signals',
      ok: check.signals.ok,
      text: `${check.signals.aborted} of ${check.signals.lost} lost permits had their signal aborted; ${check.signals.unjudged} not judged (holder killed, release outcome unknown, or "not held" answered after the deadline)`,
    },
  ]
}

function electionVerdictLines(check: CheckResult, el: ElectionCheck): { label: string; ok: boolean | null; text: string }[] {
  const writes = check.liveness.afterHeal.map((r) => (r.ms === null ? 'never' : ms(r.ms))).join(', ')
  const probes = check.liveness.probes.map((p) => (p.ok ? ms(p.waited) : 'failed')).join(', ')
  const s = check.stats
  return [
    {
      label: '(a) one leader at a time',
      ok: check.staleAccepted.length === 0 && el.interleaved.length === 0 && el.sharedTerms.length === 0 && el.counter === el.writes,
      text:
        `${el.writes} writes accepted, ${check.staleAccepted.length} with a term lower than one accepted before; ${el.interleaved.length} terms interleaved, ${el.sharedTerms.length} written by two processes; ` +
        `counter ${el.counter} after ${el.writes} increments; stale writes refused: ${s.staleRejected.claim} claims, ${s.staleRejected.write} writes`,
    },
    {
      label: '(a) terms',
      ok: el.fenceRegressions.length === 0 && el.duplicateFences.length === 0,
      text: `${el.terms} terms, ${el.fenceRegressions.length} with a fence not above one granted before they campaigned, ${el.duplicateFences.length} handed out twice; resignations ${el.resigned.ok} handed over, ${el.resigned.lost} found the term gone`,
    },
    {
      label: '(a) observers',
      ok: el.observerRegressions.length === 0,
      text: `${el.observers} observers yielded ${el.observed} states, ${el.observerRegressions.length} older than one they had yielded`,
    },
    {
      label: '(b) overlaps',
      ok: null,
      text: `${check.overlaps.length} pairs of terms that both holders believed held (expected under pauses)${check.overlaps.length ? `, longest ${ms(Math.max(...check.overlaps.map((o) => o.ms)))}` : ''}`,
    },
    {
      label: '(c) liveness',
      ok: check.liveness.ok,
      text: `first write of a leader after the final heal: ${writes} (bound ${ms(check.liveness.bound)}); fresh candidate elected after kill -9 of every worker: ${probes}`,
    },
    {
      label: '(d) signals',
      ok: check.signals.ok,
      text: `${check.signals.aborted} of ${check.signals.lost} lost terms had their signal aborted; ${check.signals.unjudged} not judged (holder killed, resign outcome unknown, or "not held" answered after the deadline)`,
    },
  ]
}

function runSection(r: ReportRun, history: string): string {
  const { check, run } = r
  const violations = check.violations.length
  const good = r.expect === 'safe' ? check.ok : violations > 0
  const on = check.semaphore ? 'permit checks on' : 'fencing on'
  const off = check.semaphore ? 'the control run broken' : 'fencing off'
  const headline =
    r.expect === 'safe'
      ? check.ok
        ? `PASS: no violations with ${on}`
        : `FAIL: ${violations} violation${violations === 1 ? '' : 's'} with ${on}`
      : violations > 0
        ? `PASS: the checker caught ${violations} violation${violations === 1 ? '' : 's'} with ${off} (as it must)`
        : 'FAIL: the control run showed no violation, so this checker could not fail'
  const rows = verdictLines(check)
    .map(
      (v) =>
        `<tr><td class="${v.ok === null ? 'info' : v.ok ? 'ok' : 'bad'}">${v.ok === null ? 'info' : v.ok ? 'ok' : 'FAIL'}</td><th>${esc(v.label)}</th><td>${esc(v.text)}</td></tr>`,
    )
    .join('')
  const s = check.stats
  const faults =
    Object.entries(s.faults)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || 'none'
  const details = check.violations.length ? `<ul class="violations">${check.violations.map((v) => `<li>${esc(v)}</li>`).join('')}</ul>` : ''
  return `<section>
<h2>${esc(run.options.label)} run <span class="${good ? 'ok' : 'bad'}">${esc(headline)}</span></h2>
<table class="verdict">${rows}</table>${details}
<p class="figures">${s.ops} operations (${s.okOps} ok), ${s.transfers} ${check.semaphore ? 'units of work done' : 'transfers committed'}, ${check.leases.length} ${check.semaphore ? 'permits' : 'leases'}, faults: ${esc(faults)};
signals aborted by reason: ${esc(JSON.stringify(s.lostByReason))}; acquire failures: ${esc(JSON.stringify(s.acquireFailures))}. History: <code>${esc(history)}</code></p>
${timeline(r.run, r.check)}
</section>`
}

export function renderReport(input: ReportInput): string {
  const fenced = input.runs.find((r) => r.expect === 'safe')
  const control = input.runs.find((r) => r.expect === 'violations')
  const ok = (fenced?.check.ok ?? true) && (control ? control.check.violations.length > 0 : true)
  const verdict = ok
    ? 'VERIFIED: with fencing, no violation; without it, the checker catches them'
    : fenced && !fenced.check.ok
      ? `NOT VERIFIED: ${fenced.check.violations.length} violation(s) with fencing on`
      : 'NOT VERIFIED: the control run showed no violation'
  const legend = Object.entries(FAULT_COLORS)
    .map(([k, c]) => `<span><i style="background:${c}"></i>${esc(k)}</span>`)
    .join('')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(input.title)}</title>
<style>
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,sans-serif;margin:16px 20px;color:#222}
h1{font-size:20px;margin:0 0 4px} h2{font-size:17px;margin:18px 0 6px}
.banner{padding:10px 14px;border-radius:6px;font-weight:600;font-size:17px;margin:6px 0 8px;color:#fff}
.banner.ok{background:#2e7d32}.banner.bad{background:#c62828}
span.ok{color:#2e7d32} span.bad{color:#c62828}
table.verdict{border-collapse:collapse;margin:4px 0} table.verdict td,table.verdict th{padding:2px 8px;text-align:left;vertical-align:top} table.verdict th{white-space:nowrap}
td.ok{color:#2e7d32;font-weight:700} td.bad{color:#c62828;font-weight:700} td.info{color:#777}
.violations{color:#c62828;margin:4px 0} .figures{color:#444;font-size:13px;margin:4px 0}
.meta{color:#555;font-size:13px} .legend span{margin-right:12px;font-size:12px} .legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-2px}
.scroll{overflow-x:auto;border:1px solid #ddd}
text.lane{font-size:12px;fill:#333} text.fault{font-size:9px;fill:#555} text.fence{font-size:10px;fill:#fff} text.tick,text.phase{font-size:11px;fill:#444}
code{font-size:12px}
</style></head><body>
<h1>${esc(input.title)}</h1>
<div class="banner ${ok ? 'ok' : 'bad'}">${esc(verdict)}</div>
<div class="meta">seed ${input.seed} · mode ${esc(input.mode)} · <code>${esc(input.command)}</code></div>
<div class="legend">Lease bars are coloured by resource and labelled with the fence's rank (#n; the full fence in the tooltip); a red outline marks a lease that was lost.
✕ a stale write the resource refused · ▼ a signal aborted · <b style="color:#d62728">●</b> a stale write that was accepted · <b style="color:#ff7f0e">●</b> a write that a later holder overwrote from an older read (lost update) · ∩ lanes: both holders believed they held the lock. Faults: ${legend}</div>
${input.runs.map((r, i) => runSection(r, input.historyPaths[i] ?? '')).join('\n')}
</body></html>
`
}

export type { HistoryEvent }
