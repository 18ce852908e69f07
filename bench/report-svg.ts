// The hand-written SVG chart of a run (docs/bench.svg): a panel of bars per figure, fencelock in orange.
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

export function renderSvg(r: Results): string {
  const W = 1000
  const colW = W / 2 - 20
  const col: [string[], string[]] = [[], []]
  const heights: [number, number] = [20, 20]
  const put = (c: 0 | 1, p: { svg: string; height: number }) => {
    col[c].push(`<g>${p.svg}</g>`)
    heights[c] += p.height + 18
  }
  const bars = <T extends { label: string; lib: string }>(rows: T[] | undefined, pick: (x: T) => number): Bar[] =>
    (rows ?? []).map((x) => ({ label: short(x.label), value: pick(x), highlight: x.lib === 'fencelock' }))
  if (r.C)
    put(
      0,
      panel(
        10,
        heights[0],
        colW,
        'C. Contended handoffs per second (8 processes, 1 key)',
        'handoffs/s, higher is better',
        bars(r.C, (x) => x.handoffsPerSec),
        true,
      ),
    )
  if (r.C)
    put(
      0,
      panel(
        10,
        heights[0],
        colW,
        'C. Handoff gap p99 (release -> next acquired)',
        'ms, lower is better',
        bars(r.C, (x) => x.gapP99),
        true,
      ),
    )
  if (r.D)
    put(
      1,
      panel(
        W / 2 + 10,
        heights[1],
        colW,
        `D. Redis commands while 8 waiters wait ${r.D[0]?.seconds ?? ''} s`,
        'commands, lower is better',
        bars(r.D, (x) => x.redisCommands),
        true,
      ),
    )
  if (r.A)
    put(
      1,
      panel(
        W / 2 + 10,
        heights[1],
        colW,
        'A. Uncontended acquire+release, one worker',
        'cycles/s, higher is better',
        bars(r.A, (x) => x.cyclesPerSec),
        false,
      ),
    )
  if (r.S)
    put(
      0,
      panel(
        10,
        heights[0],
        colW,
        `S. Semaphore (limit ${r.S[0]?.limit ?? ''}, ${r.S[0]?.procs ?? ''} processes): permits handed over per second`,
        'per second, higher is better',
        bars(r.S, (x) => x.handoffsPerSec),
        false,
      ),
    )
  if (r.S)
    put(
      0,
      panel(
        10,
        heights[0],
        colW,
        `S. Semaphore: Redis commands while ${r.S[0]?.idle.waiters ?? ''} waiters wait ${r.S[0]?.idle.seconds ?? ''} s`,
        'commands, lower is better',
        bars(r.S, (x) => x.idle.redisCommands),
        true,
      ),
    )
  if (r.T)
    put(
      1,
      panel(
        W / 2 + 10,
        heights[1],
        colW,
        `T. Transfers (${r.T[0]?.procs ?? ''} processes, ${r.T[0]?.accounts ?? ''} accounts, two locked at once)`,
        'transfers/s, higher is better',
        r.T.map((x) => ({ label: short(x.label.replace(' acquire([a, b])', '')), value: x.transfersPerSec, highlight: x.lib.startsWith('fencelock') })),
        false,
      ),
    )
  if (r.R)
    put(
      1,
      panel(
        W / 2 + 10,
        heights[1],
        colW,
        `R. Read-heavy (${Math.round((r.R[0]?.readShare ?? 0) * 100)}% reads, ${r.R[0]?.procs ?? ''} processes)`,
        'sections/s, higher is better',
        r.R.map((x) => ({ label: x.label, value: x.opsPerSec, highlight: x.lib === 'fencelock-rw' })),
        false,
      ),
    )
  if (r.E) {
    const e = r.E.filter((x) => x.lib === 'fencelock').map((x) => ({ label: `fencelock ${x.procs} x ${x.perProc}`, lib: 'fencelock', gap: x.gapP50 }))
    put(
      1,
      panel(
        W / 2 + 10,
        heights[1],
        colW,
        'E. fencelock handoff gap p50 vs waiting processes',
        'ms, lower is better',
        e.map((x) => ({ label: x.label, value: x.gap, highlight: true })),
        false,
      ),
    )
  }
  if (r.C && r.H) {
    const floorP50 = r.H.p50
    put(
      0,
      panel(
        10,
        heights[0],
        colW,
        `C. Handoff gap p50 in handoff floors (floor ${fmt(floorP50)} ms; target 1.5)`,
        'multiples of the floor, lower is better',
        bars(r.C, (x) => x.gapP50 / floorP50),
        true,
      ),
    )
  }
  if (r.L?.length)
    put(
      0,
      panel(
        10,
        heights[0],
        colW,
        `L. Wire commands per 100 leases per renewal period (${fmt(r.L[0]!.leases)} leases; target 1)`,
        'commands, lower is better',
        bars(r.L, (x) => x.wirePer100PerPeriod),
        true,
      ),
    )
  if (r.M?.length)
    put(
      1,
      panel(
        W / 2 + 10,
        heights[1],
        colW,
        `M. Redis memory per resource locked once (${fmt(r.M[0]!.resources)} resources; target 150 B)`,
        'bytes, lower is better',
        bars(r.M, (x) => Math.max(0, x.bytesPerResource)),
        false,
      ),
    )
  const H = Math.max(...heights) + 30
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
