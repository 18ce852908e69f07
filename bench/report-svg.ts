// The hand-written SVG chart of a run (docs/evidence/bench.svg): a panel of bars per figure, fencelock in orange.
import type { Results } from './results.js'
import { fmt } from './stats.js'

interface Bar {
  label: string
  value: number
  highlight: boolean
}

const xmlEsc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

function panel(x: number, y: number, w: number, title: string, unit: string, bars: Bar[], log: boolean): { svg: string; height: number } {
  const rowH = 18
  const labelW = 230
  const plotW = w - labelW - 70
  const finite = bars.filter((b) => Number.isFinite(b.value) && b.value > 0)
  const max = Math.max(1e-9, ...finite.map((b) => b.value))
  const min = log ? Math.max(1e-9, Math.min(...finite.map((b) => b.value)) / 2) : 0
  const scale = (v: number) => {
    if (!(v > 0) || !Number.isFinite(v)) return 0
    if (!log) return (v / max) * plotW
    const lo = Math.log10(min)
    const hi = Math.log10(max)
    return hi === lo ? plotW : ((Math.log10(v) - lo) / (hi - lo)) * plotW
  }
  const parts: string[] = [
    `<text x="${x}" y="${y + 14}" class="title">${xmlEsc(title)}</text>`,
    `<text x="${x}" y="${y + 30}" class="unit">${xmlEsc(unit)}${log ? ' (log scale)' : ''}</text>`,
  ]
  bars.forEach((b, i) => {
    const by = y + 40 + i * rowH
    const bw = Math.max(1, scale(b.value))
    parts.push(
      `<text x="${x + labelW - 6}" y="${by + 12}" class="label" text-anchor="end">${xmlEsc(b.label)}</text>`,
      `<rect x="${x + labelW}" y="${by + 2}" width="${bw.toFixed(1)}" height="${rowH - 5}" class="${b.highlight ? 'us' : 'peer'}"/>`,
      `<text x="${x + labelW + bw + 4}" y="${by + 12}" class="value">${Number.isFinite(b.value) ? xmlEsc(fmt(b.value)) : 'n/a'}</text>`,
    )
  })
  return { svg: parts.join('\n'), height: 48 + bars.length * rowH }
}

const short = (label: string) =>
  label
    .replace(' (defaults: ', ' (def. ')
    .replace(/±100 ms ×10/, '±100 ms')
    .replace('@sesamecare-oss/redlock', 'sesamecare redlock')
    .replace('seed SET NX + Lua', 'seed SET NX')

/** One panel before layout: which column it goes in, and what it shows. */
interface PanelSpec {
  col: 0 | 1
  title: string
  unit: string
  bars: Bar[]
  log: boolean
}

const W = 1000

const bars = <T extends { label: string; lib: string }>(rows: T[] | undefined, pick: (x: T) => number): Bar[] =>
  (rows ?? []).map((x) => ({ label: short(x.label), value: pick(x), highlight: x.lib === 'fencelock' }))

/** C, D and A: contended and uncontended single locks. */
function lockPanels(r: Results): PanelSpec[] {
  const out: PanelSpec[] = []
  if (r.C)
    out.push({
      col: 0,
      title: 'C. Contended handoffs per second (8 processes, 1 key)',
      unit: 'handoffs/s, higher is better',
      bars: bars(r.C, (x) => x.handoffsPerSec),
      log: true,
    })
  if (r.C)
    out.push({ col: 0, title: 'C. Handoff gap p99 (release -> next acquired)', unit: 'ms, lower is better', bars: bars(r.C, (x) => x.gapP99), log: true })
  if (r.D)
    out.push({
      col: 1,
      title: `D. Redis commands while 8 waiters wait ${r.D[0]?.seconds ?? ''} s`,
      unit: 'commands, lower is better',
      bars: bars(r.D, (x) => x.redisCommands),
      log: true,
    })
  if (r.A)
    out.push({
      col: 1,
      title: 'A. Uncontended acquire+release, one worker',
      unit: 'cycles/s, higher is better',
      bars: bars(r.A, (x) => x.cyclesPerSec),
      log: false,
    })
  return out
}

/** S, T and R: the semaphore, transfers under two locks, read/write locks. */
function sharingPanels(r: Results): PanelSpec[] {
  const out: PanelSpec[] = []
  if (r.S)
    out.push({
      col: 0,
      title: `S. Semaphore (limit ${r.S[0]?.limit ?? ''}, ${r.S[0]?.procs ?? ''} processes): permits handed over per second`,
      unit: 'per second, higher is better',
      bars: bars(r.S, (x) => x.handoffsPerSec),
      log: false,
    })
  if (r.S)
    out.push({
      col: 0,
      title: `S. Semaphore: Redis commands while ${r.S[0]?.idle.waiters ?? ''} waiters wait ${r.S[0]?.idle.seconds ?? ''} s`,
      unit: 'commands, lower is better',
      bars: bars(r.S, (x) => x.idle.redisCommands),
      log: true,
    })
  if (r.T)
    out.push({
      col: 1,
      title: `T. Transfers (${r.T[0]?.procs ?? ''} processes, ${r.T[0]?.accounts ?? ''} accounts, two locked at once)`,
      unit: 'transfers/s, higher is better',
      bars: r.T.map((x) => ({ label: short(x.label.replace(' acquire([a, b])', '')), value: x.transfersPerSec, highlight: x.lib.startsWith('fencelock') })),
      log: false,
    })
  if (r.R)
    out.push({
      col: 1,
      title: `R. Read-heavy (${Math.round((r.R[0]?.readShare ?? 0) * 100)}% reads, ${r.R[0]?.procs ?? ''} processes)`,
      unit: 'sections/s, higher is better',
      bars: r.R.map((x) => ({ label: x.label, value: x.opsPerSec, highlight: x.lib === 'fencelock-rw' })),
      log: false,
    })
  return out
}

/** E, C against the floor, L and M: how fencelock holds up as waiters, leases and resources grow. */
function scalePanels(r: Results): PanelSpec[] {
  const out: PanelSpec[] = []
  if (r.E) {
    const e = r.E.filter((x) => x.lib === 'fencelock').map((x) => ({ label: `fencelock ${x.procs} x ${x.perProc}`, value: x.gapP50, highlight: true }))
    out.push({ col: 1, title: 'E. fencelock handoff gap p50 vs waiting processes', unit: 'ms, lower is better', bars: e, log: false })
  }
  if (r.C && r.H) {
    const floorP50 = r.H.p50
    out.push({
      col: 0,
      title: `C. Handoff gap p50 in handoff floors (floor ${fmt(floorP50)} ms; target 1.5)`,
      unit: 'multiples of the floor, lower is better',
      bars: bars(r.C, (x) => x.gapP50 / floorP50),
      log: true,
    })
  }
  if (r.L?.length)
    out.push({
      col: 0,
      title: `L. Wire commands per 100 leases per renewal period (${fmt(r.L[0]!.leases)} leases; target 1)`,
      unit: 'commands, lower is better',
      bars: bars(r.L, (x) => x.wirePer100PerPeriod),
      log: true,
    })
  if (r.M?.length)
    out.push({
      col: 1,
      title: `M. Redis memory per resource locked once (${fmt(r.M[0]!.resources)} resources; target 150 B)`,
      unit: 'bytes, lower is better',
      bars: bars(r.M, (x) => Math.max(0, x.bytesPerResource)),
      log: false,
    })
  return out
}

/** Stacks the panels down their columns, in the order given. */
function layout(specs: PanelSpec[]): { col: [string[], string[]]; height: number } {
  const colW = W / 2 - 20
  const col: [string[], string[]] = [[], []]
  const heights: [number, number] = [20, 20]
  for (const s of specs) {
    const p = panel(s.col === 0 ? 10 : W / 2 + 10, heights[s.col], colW, s.title, s.unit, s.bars, s.log)
    col[s.col].push(`<g>${p.svg}</g>`)
    heights[s.col] += p.height + 18
  }
  return { col, height: Math.max(...heights) + 30 }
}

export function renderSvg(r: Results): string {
  const { col, height: H } = layout([...lockPanels(r), ...sharingPanels(r), ...scalePanels(r)])
  const m = r.machine
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif">`,
    '<style>.title{font-size:13px;font-weight:bold;fill:#222}.unit{font-size:11px;fill:#666}.label{font-size:11px;fill:#333}.value{font-size:10px;fill:#333}.us{fill:#d9480f}.peer{fill:#868e96}.foot{font-size:10px;fill:#888}</style>',
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    ...col[0],
    ...col[1],
    `<text x="10" y="${H - 10}" class="foot">${xmlEsc(`npm run bench, ${m.date}: ${m.nproc} cores, ${m.cpu}, Node ${m.node}, Redis ${m.redis}, ${m.mode} mode. Orange: fencelock.`)}</text>`,
    '</svg>',
    '',
  ].join('\n')
}
