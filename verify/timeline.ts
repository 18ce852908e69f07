// The timeline of one run (SVG): a lane per worker with its lease intervals labelled by fence
// rank, a lane per resource for overlaps, one for Redis; faults as shaded bands, phases as dashed
// lines, refused and accepted stale writes, lost updates, and the moments signals aborted.
import type { CheckResult, LeaseInterval } from './check-result.js'
import type { FaultEvent, HistoryEvent, OpEvent } from './history.js'
import type { RunResult } from './run.js'

export const esc = (s: unknown): string => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
export const ms = (x: number) => `${Math.round(x)} ms`
const RESOURCE_COLORS = ['#4e79a7', '#59a14f', '#9c755f', '#b07aa1', '#76b7b2', '#edc948']
export const FAULT_COLORS: Record<string, string> = {
  'pause-worker': '#f28e2b',
  'kill-worker': '#e15759',
  'kill-redis': '#e15759',
  partition: '#bab0ac',
  delay: '#edc948',
  'script-flush': '#76b7b2',
  reconnect: '#b07aa1',
  clock: '#8cd17d',
  'failover-kill': '#c0392b',
  'failover-pause': '#8e44ad',
  'failover-isolate': '#d35400',
  'failover-stale-replica': '#7d3c98',
}

/** Where things go: the time scale, the lanes, and the drawing's size. */
interface Frame {
  t0: number
  span: number
  plot: number
  x: (t: number) => number
  workers: string[]
  resources: string[]
  lanes: string[]
  laneY: (name: string) => number
  height: number
  width: number
}

const left = 64
const laneH = 30
const top = 24

function frameOf(run: RunResult, check: CheckResult): Frame {
  const t0 = run.events[0]?.time ?? 0
  const span = Math.max(1, run.final.end - t0)
  const plot = Math.max(1240, Math.min(30_000, Math.round((span / 1000) * 40)))
  const workers = Array.from({ length: run.options.workers }, (_, i) => `w${i}`)
  const resources = [...new Set(check.leases.map((l) => l.resource).concat(run.final.probes.map((p) => p.resource)))].sort()
  const lanes = [...workers, ...resources.map((res) => `overlap ${res}`), 'redis']
  return {
    t0,
    span,
    plot,
    x: (t: number) => left + ((t - t0) / span) * plot,
    workers,
    resources,
    lanes,
    laneY: (name: string) => top + lanes.indexOf(name) * laneH,
    height: top + lanes.length * laneH + 24,
    width: left + plot + 16,
  }
}

/** Lanes and their labels. */
function laneParts(f: Frame): string[] {
  return f.lanes.flatMap((name, i) => {
    const y = top + i * laneH
    return [
      `<rect x="${left}" y="${y}" width="${f.plot}" height="${laneH}" fill="${i % 2 ? '#fafafa' : '#f2f2f2'}"/>`,
      `<text x="${left - 6}" y="${y + laneH / 2 + 4}" text-anchor="end" class="lane">${esc(name.replace('overlap ', '∩ '))}</text>`,
    ]
  })
}

/** A fault's label on the timeline; a clock step says how far (its end's title says how far it jumped). */
function faultLabel(start: FaultEvent): string {
  if (start.fault === 'clock') return `clock ${/server clock (\S+ s)/.exec(start.detail ?? '')?.[1] ?? ''}`.trim()
  return start.fault.replace('-worker', '').replace('-redis', ' redis')
}

/** Faults: worker faults shade the worker's lane, Redis faults shade every lane. */
function faultParts(f: Frame, events: HistoryEvent[]): string[] {
  const { x, laneY } = f
  const parts: string[] = []
  const faults = events.filter((e): e is FaultEvent => e.kind === 'fault')
  for (const start of faults.filter((g) => g.phase === 'start')) {
    const ended = faults.find((g) => g.phase === 'end' && g.id === start.id)
    const end = ended?.time ?? start.time
    const color = FAULT_COLORS[start.fault] ?? '#999'
    const w = Math.max(2, x(end) - x(start.time))
    const onWorker = start.fault === 'pause-worker' || start.fault === 'kill-worker'
    const y = onWorker ? laneY(start.target) : top
    const h = onWorker ? laneH : f.lanes.length * laneH
    const title = `${start.fault} ${start.target}${start.detail ? ` (${start.detail})` : ''}, ${ms(end - start.time)}${ended?.detail ? `; then ${ended.detail}` : ''}`
    parts.push(
      `<rect x="${x(start.time)}" y="${y}" width="${w}" height="${h}" fill="${color}" opacity="${onWorker ? 0.45 : 0.22}"><title>${esc(title)}</title></rect>`,
    )
    if (!onWorker) {
      parts.push(`<rect x="${x(start.time)}" y="${laneY('redis') + 4}" width="${w}" height="${laneH - 8}" fill="${color}"><title>${esc(title)}</title></rect>`)
    }
    parts.push(`<text x="${x(start.time) + 1}" y="${top - 4}" class="fault">${esc(faultLabel(start))}</text>`)
  }
  return parts
}

function phaseParts(f: Frame, events: HistoryEvent[]): string[] {
  const parts: string[] = []
  for (const e of events) {
    if (e.kind === 'meta' && e.what === 'phase' && ['chaos', 'recover', 'stop'].includes(e.name)) {
      parts.push(`<line x1="${f.x(e.time)}" x2="${f.x(e.time)}" y1="${top}" y2="${f.height - 20}" stroke="#333" stroke-dasharray="4 3"/>`)
      parts.push(`<text x="${f.x(e.time) + 3}" y="${f.height - 26}" class="phase">${esc(e.name)}</text>`)
    }
  }
  return parts
}

/** Leases, labelled with their fence (its rank within the resource; the full value in the tooltip), and the overlaps. */
function leaseParts(f: Frame, check: CheckResult): string[] {
  const { x, laneY, resources, workers } = f
  const parts: string[] = []
  const rank = new Map<string, number>()
  for (const res of resources) {
    check.leases
      .filter((l) => l.resource === res)
      .sort((a, b) => a.fence - b.fence)
      .forEach((l, i) => rank.set(`${res}|${l.fence}`, i + 1))
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
    parts.push(
      `<rect x="${x(start)}" y="${y + 6}" width="${w}" height="${laneH - 12}" fill="#d62728" opacity="0.8"><title>${esc(`${o.a.worker} #${rank.get(`${o.resource}|${o.a.fence}`)} and ${o.b.worker} #${rank.get(`${o.resource}|${o.b.fence}`)} both believed they held ${o.resource} for ${ms(o.ms)}`)}</title></rect>`,
    )
  }
  return parts
}

/** Stale writes the resource refused (✕), aborted signals (▼), accepted stale writes (the violations, ●), lost updates. */
function markerParts(f: Frame, events: HistoryEvent[], check: CheckResult): string[] {
  const { x, laneY, workers } = f
  const parts: string[] = []
  for (const e of events) {
    if (e.kind === 'op' && e.type === 'fail' && e.error === 'stale' && workers.includes(e.worker)) {
      const cx = x(e.time)
      const cy = laneY(e.worker) + laneH / 2
      parts.push(
        `<path d="M${cx - 5},${cy - 5}L${cx + 5},${cy + 5}M${cx - 5},${cy + 5}L${cx + 5},${cy - 5}" stroke="#d62728" stroke-width="2.5"><title>${esc(`${e.worker}: ${e.f} with fence ${e.fence} refused as stale`)}</title></path>`,
      )
    }
    if (e.kind === 'lost' && workers.includes(e.worker)) {
      const cx = x(e.time)
      const cy = laneY(e.worker) + 3
      parts.push(
        `<path d="M${cx - 4},${cy}L${cx + 4},${cy}L${cx},${cy + 7}Z" fill="#111"><title>${esc(`${e.worker}: signal aborted (${e.reason}) for fence ${e.fence}`)}</title></path>`,
      )
    }
  }
  const staleWrites = events.filter((e): e is OpEvent => e.kind === 'op' && e.f === 'write' && e.type === 'ok')
  const staleSet = new Set(check.staleAccepted.filter((s) => s.store === 'sql').map((s) => s.fence))
  for (const e of staleWrites) {
    if (!staleSet.has(e.fence ?? -1) || !workers.includes(e.worker)) continue
    parts.push(
      `<circle cx="${x(e.time)}" cy="${laneY(e.worker) + laneH / 2}" r="6" fill="#d62728" stroke="#fff"><title>${esc(`${e.worker}: write with stale fence ${e.fence} ACCEPTED`)}</title></circle>`,
    )
  }
  for (const u of check.lostUpdates) {
    const y = laneY(u.lost.worker)
    if (!workers.includes(u.lost.worker)) continue
    parts.push(
      `<circle cx="${x(u.lost.committed)}" cy="${y + laneH / 2}" r="6" fill="#ff7f0e" stroke="#fff"><title>${esc(`${u.lost.worker}: write with fence ${u.lost.fence} to account ${u.account} LOST: ${u.by.worker} (fence ${u.by.fence}) had read the account before it and overwrote it`)}</title></circle>`,
    )
  }
  return parts
}

function timeAxis(f: Frame): string[] {
  const parts: string[] = []
  const step = f.span > 120_000 ? 10_000 : f.span > 30_000 ? 5_000 : 1_000
  for (let t = 0; t <= f.span; t += step) {
    parts.push(`<line x1="${f.x(f.t0 + t)}" x2="${f.x(f.t0 + t)}" y1="${f.height - 22}" y2="${f.height - 18}" stroke="#555"/>`)
    parts.push(`<text x="${f.x(f.t0 + t)}" y="${f.height - 6}" text-anchor="middle" class="tick">${t / 1000}s</text>`)
  }
  return parts
}

export function timeline(run: RunResult, check: CheckResult): string {
  const f = frameOf(run, check)
  const parts = [
    ...laneParts(f),
    ...faultParts(f, run.events),
    ...phaseParts(f, run.events),
    ...leaseParts(f, check),
    ...markerParts(f, run.events, check),
    ...timeAxis(f),
  ]
  return `<div class="scroll"><svg xmlns="http://www.w3.org/2000/svg" width="${f.width}" height="${f.height}" viewBox="0 0 ${f.width} ${f.height}">${parts.join('')}</svg></div>`
}
