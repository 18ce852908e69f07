// The HTML report: one self-contained file, no scripts, no external assets. Per run: the verdict,
// then a timeline (SVG) with a lane per worker: lease intervals labelled with their fence, faults
// as shaded bands, stale writes the resource refused, and the moments signals aborted.
import type { CheckResult, LeaseInterval } from './checker.js'
import type { SemaphoreCheck } from './semaphore-checker.js'
import type { FaultEvent, HistoryEvent, OpEvent } from './history.js'
import type { RunResult } from './run.js'

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

const esc = (s: unknown): string =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
const ms = (x: number) => `${Math.round(x)} ms`
const RESOURCE_COLORS = ['#4e79a7', '#59a14f', '#9c755f', '#b07aa1', '#76b7b2', '#edc948']
const FAULT_COLORS: Record<string, string> = {
  'pause-worker': '#f28e2b',
  'kill-worker': '#e15759',
  'kill-redis': '#e15759',
  partition: '#bab0ac',
  delay: '#edc948',
  'script-flush': '#76b7b2',
  reconnect: '#b07aa1',
}

/** Pass/fail lines for one run, the same text the terminal summary prints. */
export function verdictLines(check: CheckResult): { label: string; ok: boolean | null; text: string }[] {
  if (check.semaphore) return semaphoreVerdictLines(check, check.semaphore)
  const s = check.stats
  const afterHeal = check.liveness.afterHeal.map((r) => `${r.resource} ${r.ms === null ? 'never' : ms(r.ms)}`).join(', ')
  const probes = check.liveness.probes.map((p) => `${p.resource} ${p.ok ? ms(p.waited) : 'failed'}`).join(', ')
  const stall = check.liveness.stalls[0]
  return [
    {
      label: '(a) safety',
      ok: check.money.ok && check.staleAccepted.length === 0 && check.lostUpdates.length === 0,
      text:
        `money ${check.money.initial} → ${check.money.final}${check.money.ok ? ' (conserved)' : ` (${check.money.final - check.money.initial > 0 ? '+' : ''}${check.money.final - check.money.initial})`}; ` +
        `${check.staleAccepted.length} accepted writes with a lower fence than one accepted before; ${check.lostUpdates.length} lost updates; ` +
        `stale writes rejected: ${s.staleRejected.claim} claims, ${s.staleRejected.write} SQL writes, ${s.staleRejected.fset} fencedSet`,
    },
    {
      label: '(b) overlaps',
      ok: null,
      text: `${check.overlaps.length} overlapping lease pairs as the holders saw them (expected under pauses)` +
        (check.overlaps.length ? `, longest ${ms(Math.max(...check.overlaps.map((o) => o.ms)))}` : ''),
    },
    {
      label: '(c) liveness',
      ok: check.liveness.ok,
      text: `first acquire after the final heal: ${afterHeal} (bound ${ms(check.liveness.bound)}); fresh client after kill -9 of every worker: ${probes}` +
        (stall ? `; longest stall (free, someone waiting, not acquired): ${ms(stall.ms)} on ${stall.resource} around ${stall.faults.join(', ') || 'no fault'}` : ''),
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
  const excused = sem.excused.length ? `; ${sem.excused.length} more stretches not judged (a permit granted before the single Redis node restarted empty)` : ''
  return [
    {
      label: '(a) limit',
      ok: sem.excess.length === 0 && sem.insideExcess.length === 0,
      text: `at most ${sem.maxBelieved} permits believed valid at once (limit ${sem.limit}), ${sem.excess.length} stretches over the limit${excused}; ` +
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
      text: `${check.overlaps.length} stretches with more than ${sem.limit} permits as their holders saw them, deadlines ignored (expected under pauses)` +
        (check.overlaps.length ? `, longest ${ms(Math.max(...check.overlaps.map((o) => o.ms)))}` : ''),
    },
    {
      label: '(c) liveness',
      ok: check.liveness.ok,
      text: `first permit after the final heal: ${afterHeal} (bound ${ms(check.liveness.bound)}); fresh client, every permit after kill -9 of every worker: ${probes}` +
        (stall ? `; longest stall (a release, someone waiting, no grant): ${ms(stall.ms)} around ${stall.faults.join(', ') || 'no fault'}` : ''),
    },
    {
      label: '(d) signals',
      ok: check.signals.ok,
      text: `${check.signals.aborted} of ${check.signals.lost} lost permits had their signal aborted; ${check.signals.unjudged} not judged (holder killed, release outcome unknown, or "not held" answered after the deadline)`,
    },
  ]
}

function timeline(r: ReportRun): string {
  const { run, check } = r
  const events = run.events
  const t0 = events[0]?.time ?? 0
  const t1 = run.final.end
  const span = Math.max(1, t1 - t0)
  const left = 64
  const plot = Math.max(1240, Math.min(30_000, Math.round((span / 1000) * 40)))
  const x = (t: number) => left + ((t - t0) / span) * plot
  const workers = Array.from({ length: run.options.workers }, (_, i) => `w${i}`)
  const resources = [...new Set(check.leases.map((l) => l.resource).concat(run.final.probes.map((p) => p.resource)))].sort()
  const laneH = 30
  const top = 24
  const lanes = [...workers, ...resources.map((res) => `overlap ${res}`), 'redis']
  const laneY = (name: string) => top + lanes.indexOf(name) * laneH
  const height = top + lanes.length * laneH + 24
  const width = left + plot + 16
  const parts: string[] = []

  // Lanes and their labels.
  lanes.forEach((name, i) => {
    const y = top + i * laneH
    parts.push(`<rect x="${left}" y="${y}" width="${plot}" height="${laneH}" fill="${i % 2 ? '#fafafa' : '#f2f2f2'}"/>`)
    parts.push(`<text x="${left - 6}" y="${y + laneH / 2 + 4}" text-anchor="end" class="lane">${esc(name.replace('overlap ', '∩ '))}</text>`)
  })

  // Faults: worker faults shade the worker's lane, Redis faults shade every lane.
  const faults = events.filter((e): e is FaultEvent => e.kind === 'fault')
  for (const start of faults.filter((f) => f.phase === 'start')) {
    const end = faults.find((f) => f.phase === 'end' && f.id === start.id)?.time ?? start.time
    const color = FAULT_COLORS[start.fault] ?? '#999'
    const w = Math.max(2, x(end) - x(start.time))
    const onWorker = start.fault === 'pause-worker' || start.fault === 'kill-worker'
    const y = onWorker ? laneY(start.target) : top
    const h = onWorker ? laneH : lanes.length * laneH
    const title = `${start.fault} ${start.target}${start.detail ? ` (${start.detail})` : ''}, ${ms(end - start.time)}`
    parts.push(`<rect x="${x(start.time)}" y="${y}" width="${w}" height="${h}" fill="${color}" opacity="${onWorker ? 0.45 : 0.22}"><title>${esc(title)}</title></rect>`)
    if (!onWorker) {
      parts.push(`<rect x="${x(start.time)}" y="${laneY('redis') + 4}" width="${w}" height="${laneH - 8}" fill="${color}"><title>${esc(title)}</title></rect>`)
    }
    parts.push(`<text x="${x(start.time) + 1}" y="${top - 4}" class="fault">${esc(start.fault.replace('-worker', '').replace('-redis', ' redis'))}</text>`)
  }

  // Phases.
  for (const e of events) {
    if (e.kind === 'meta' && e.what === 'phase' && ['chaos', 'recover', 'stop'].includes(e.name)) {
      parts.push(`<line x1="${x(e.time)}" x2="${x(e.time)}" y1="${top}" y2="${height - 20}" stroke="#333" stroke-dasharray="4 3"/>`)
      parts.push(`<text x="${x(e.time) + 3}" y="${height - 26}" class="phase">${esc(e.name)}</text>`)
    }
  }

  // Leases, labelled with their fence (its rank within the resource; the full value in the tooltip).
  const rank = new Map<string, number>()
  for (const res of resources) {
    check.leases.filter((l) => l.resource === res).sort((a, b) => a.fence - b.fence).forEach((l, i) => rank.set(`${res}|${l.fence}`, i + 1))
  }
  const barOf = (l: LeaseInterval, y: number, h: number, label: boolean) => {
    const color = RESOURCE_COLORS[resources.indexOf(l.resource) % RESOURCE_COLORS.length]
    const w = Math.max(1.5, x(l.end) - x(l.start))
    const lost = l.ended === 'lost' || l.ended === 'release-false'
    const title = `${l.worker} ${l.resource} fence ${l.fence} (#${rank.get(`${l.resource}|${l.fence}`)}), ${ms(l.end - l.start)}, ended: ${l.ended}${l.lost ? ` (signal: ${l.lost.reason})` : ''}`
    let s = `<rect x="${x(l.start)}" y="${y}" width="${w}" height="${h}" fill="${color}" ${lost ? 'stroke="#d62728" stroke-width="1.5"' : ''}><title>${esc(title)}</title></rect>`
    if (label && w > 22) s += `<text x="${x(l.start) + 2}" y="${y + h - 4}" class="fence">#${rank.get(`${l.resource}|${l.fence}`)}</text>`
    return s
  }
  for (const l of check.leases) {
    if (!workers.includes(l.worker)) continue
    parts.push(barOf(l, laneY(l.worker) + 5, laneH - 10, true))
  }
  for (const o of check.overlaps) {
    const y = laneY(`overlap ${o.resource}`)
    const start = o.b.start
    const w = Math.max(1.5, x(start + o.ms) - x(start))
    parts.push(`<rect x="${x(start)}" y="${y + 6}" width="${w}" height="${laneH - 12}" fill="#d62728" opacity="0.8"><title>${esc(`${o.a.worker} #${rank.get(`${o.resource}|${o.a.fence}`)} and ${o.b.worker} #${rank.get(`${o.resource}|${o.b.fence}`)} both believed they held ${o.resource} for ${ms(o.ms)}`)}</title></rect>`)
  }

  // Stale writes the resource refused (✕), and accepted stale writes (the violations, ●).
  for (const e of events) {
    if (e.kind === 'op' && e.type === 'fail' && e.error === 'stale' && workers.includes(e.worker)) {
      const cx = x(e.time)
      const cy = laneY(e.worker) + laneH / 2
      parts.push(`<path d="M${cx - 5},${cy - 5}L${cx + 5},${cy + 5}M${cx - 5},${cy + 5}L${cx + 5},${cy - 5}" stroke="#d62728" stroke-width="2.5"><title>${esc(`${e.worker}: ${e.f} with fence ${e.fence} refused as stale`)}</title></path>`)
    }
    if (e.kind === 'lost' && workers.includes(e.worker)) {
      const cx = x(e.time)
      const cy = laneY(e.worker) + 3
      parts.push(`<path d="M${cx - 4},${cy}L${cx + 4},${cy}L${cx},${cy + 7}Z" fill="#111"><title>${esc(`${e.worker}: signal aborted (${e.reason}) for fence ${e.fence}`)}</title></path>`)
    }
  }
  const staleWrites = events.filter((e): e is OpEvent => e.kind === 'op' && e.f === 'write' && e.type === 'ok')
  const staleSet = new Set(check.staleAccepted.filter((s) => s.store === 'sql').map((s) => s.fence))
  for (const e of staleWrites) {
    if (!staleSet.has(e.fence ?? -1) || !workers.includes(e.worker)) continue
    parts.push(`<circle cx="${x(e.time)}" cy="${laneY(e.worker) + laneH / 2}" r="6" fill="#d62728" stroke="#fff"><title>${esc(`${e.worker}: write with stale fence ${e.fence} ACCEPTED`)}</title></circle>`)
  }

  for (const u of check.lostUpdates) {
    const y = laneY(u.lost.worker)
    if (!workers.includes(u.lost.worker)) continue
    parts.push(`<circle cx="${x(u.lost.committed)}" cy="${y + laneH / 2}" r="6" fill="#ff7f0e" stroke="#fff"><title>${esc(`${u.lost.worker}: write with fence ${u.lost.fence} to account ${u.account} LOST: ${u.by.worker} (fence ${u.by.fence}) had read the account before it and overwrote it`)}</title></circle>`)
  }

  // Time axis.
  const step = span > 120_000 ? 10_000 : span > 30_000 ? 5_000 : 1_000
  for (let t = 0; t <= span; t += step) {
    parts.push(`<line x1="${x(t0 + t)}" x2="${x(t0 + t)}" y1="${height - 22}" y2="${height - 18}" stroke="#555"/>`)
    parts.push(`<text x="${x(t0 + t)}" y="${height - 6}" text-anchor="middle" class="tick">${t / 1000}s</text>`)
  }
  return `<div class="scroll"><svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${parts.join('')}</svg></div>`
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
    .map((v) => `<tr><td class="${v.ok === null ? 'info' : v.ok ? 'ok' : 'bad'}">${v.ok === null ? 'info' : v.ok ? 'ok' : 'FAIL'}</td><th>${esc(v.label)}</th><td>${esc(v.text)}</td></tr>`)
    .join('')
  const s = check.stats
  const faults = Object.entries(s.faults).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'
  const details = check.violations.length ? `<ul class="violations">${check.violations.map((v) => `<li>${esc(v)}</li>`).join('')}</ul>` : ''
  return `<section>
<h2>${esc(run.options.label)} run <span class="${good ? 'ok' : 'bad'}">${esc(headline)}</span></h2>
<table class="verdict">${rows}</table>${details}
<p class="figures">${s.ops} operations (${s.okOps} ok), ${s.transfers} ${check.semaphore ? 'units of work done' : 'transfers committed'}, ${check.leases.length} ${check.semaphore ? 'permits' : 'leases'}, faults: ${esc(faults)};
signals aborted by reason: ${esc(JSON.stringify(s.lostByReason))}; acquire failures: ${esc(JSON.stringify(s.acquireFailures))}. History: <code>${esc(history)}</code></p>
${timeline(r)}
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
