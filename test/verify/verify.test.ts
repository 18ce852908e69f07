// `npm run verify` end to end, in its quick form: fencelock under a seeded fault schedule must keep
// the bank's money and fences intact, the same schedule with fencing off must make the checker
// report violations (so the checker can fail), and the HTML report must render in Chromium.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { inflateSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { requireRedisOrSkip } from '../../harness/redis-server.js'
import { findPg } from '../../verify/pg-target.js'
import { CONTROL_ATTEMPTS, QUICK_SEED, verify } from '../../verify/main.js'
import { clockFaults } from './quick-run.js'

function findChromium(): string | undefined {
  if (existsSync('/usr/bin/chromium')) return '/usr/bin/chromium'
  const found = spawnSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' })
  return found.status === 0 && found.stdout.trim() ? found.stdout.trim() : undefined
}

/** CI must never skip: a missing PostgreSQL or Chromium fails loudly there; elsewhere it skips with the reason. */
async function ready(): Promise<{ chromium: string } | undefined> {
  if (!requireRedisOrSkip()) return undefined
  const reasons: string[] = []
  const pg = await findPg()
  if ('error' in pg) reasons.push(pg.error)
  const chromium = findChromium()
  if (!chromium) reasons.push('chromium is not installed (apt-get install -y chromium)')
  if (reasons.length === 0 && chromium) return { chromium }
  const reason = reasons.join('; ')
  if (process.env.CI === 'true') throw new Error(`[fencelock verify test] ${reason}. In CI this is fatal: install it instead of skipping.`)
  console.warn(`[fencelock verify test] skipping: ${reason}`)
  return undefined
}

const env = await ready()

interface Png {
  width: number
  height: number
  /** RGB triples, row-major. */
  pixel(x: number, y: number): [number, number, number]
}

/** Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes). */
function decodePng(file: Buffer): Png {
  expect(file.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a')
  let offset = 8
  let width = 0
  let height = 0
  let channels = 0
  const idat: Buffer[] = []
  while (offset < file.length) {
    const length = file.readUInt32BE(offset)
    const type = file.toString('ascii', offset + 4, offset + 8)
    const data = file.subarray(offset + 8, offset + 8 + length)
    if (type === 'IHDR') {
      width = data.readUInt32BE(0)
      height = data.readUInt32BE(4)
      expect(data[8]).toBe(8) // bit depth
      channels = data[9] === 6 ? 4 : data[9] === 2 ? 3 : 0
      expect(channels).toBeGreaterThan(0)
      expect(data[12]).toBe(0) // no interlace
    }
    if (type === 'IDAT') idat.push(data)
    offset += 12 + length
  }
  const raw = inflateSync(Buffer.concat(idat))
  const stride = width * channels
  const out = Buffer.alloc(height * stride)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!
    for (let i = 0; i < stride; i++) {
      const x = raw[y * (stride + 1) + 1 + i]!
      const a = i >= channels ? out[y * stride + i - channels]! : 0
      const b = y > 0 ? out[(y - 1) * stride + i]! : 0
      const c = y > 0 && i >= channels ? out[(y - 1) * stride + i - channels]! : 0
      let v = x
      if (filter === 1) v = x + a
      else if (filter === 2) v = x + b
      else if (filter === 3) v = x + ((a + b) >> 1)
      else if (filter === 4) {
        const p = a + b - c
        const pa = Math.abs(p - a)
        const pb = Math.abs(p - b)
        const pc = Math.abs(p - c)
        v = x + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)
      }
      out[y * stride + i] = v & 0xff
    }
  }
  return {
    width,
    height,
    pixel: (x, y) => {
      const i = y * stride + x * channels
      return [out[i]!, out[i + 1]!, out[i + 2]!]
    },
  }
}

describe.skipIf(!env)('npm run verify (quick form)', () => {
  it('keeps money and fences intact with fencing, catches violations without it, and draws the report', async () => {
    const outDir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-verify-'))
    try {
      const result = await verify({
        seed: QUICK_SEED,
        chaosMs: 15_000,
        quorum: false,
        nodes: 1,
        workers: 4,
        ttl: 1_000,
        guard: 'claim',
        control: true,
        outDir,
        quiet: true,
        clock: clockFaults,
      })
      const fenced = result.fenced.check
      const control = result.control!.check
      const summary = (label: string, c: typeof fenced) => `${label}: ${c.violations.join(' | ') || 'no violations'}`
      console.log(`[verify] ${summary('fenced', fenced)}\n[verify] ${summary('control', control)}\n[verify] report: ${result.reportPath}`)

      // The run did something: faults were injected, money moved, stale writes were refused.
      expect(fenced.stats.transfers).toBeGreaterThan(50)
      expect(Object.values(fenced.stats.faults).reduce((a, b) => a + b, 0)).toBeGreaterThan(3)
      expect(fenced.leases.length).toBeGreaterThan(50)

      // (a) with fencing: not one unit of money created or destroyed, no stale fence accepted.
      expect(fenced.money).toEqual({ initial: 8_000, final: 8_000, ok: true })
      expect(fenced.staleAccepted).toEqual([])
      expect(fenced.lostUpdates).toEqual([])
      // (c) every resource is taken again within one ttl (+ slack) after the heal and after kill -9
      // of every worker, dead waiters included.
      expect(fenced.liveness.afterHeal.every((r) => r.ms !== null)).toBe(true)
      expect(fenced.liveness.probes.every((p) => p.ok)).toBe(true)
      expect(fenced.liveness.ok, fenced.violations.join(' | ')).toBe(true)
      // (d) every lease that was lost had its signal aborted.
      expect(fenced.signals.lost).toBeGreaterThan(0)
      expect(fenced.signals.missing).toEqual([])
      expect(fenced.ok, fenced.violations.join(' | ')).toBe(true)

      // Control run, same schedule, fencing off: the checker must catch the damage.
      expect(control.violations.some((v) => v.startsWith('(a)'))).toBe(true)
      expect(control.money.ok && control.staleAccepted.length === 0).toBe(false)
      // The server clock fault (libfaketime): in both runs; the control's step back past its 2 s
      // fenceRetention makes fences fall back, and the checker says so.
      if (clockFaults) {
        expect(fenced.stats.faults.clock).toBe(1)
        expect(control.violations.some((v) => /leases of bank-\d got a fence not above/.test(v))).toBe(true)
      }

      // The history is JSON lines with monotonic timestamps.
      const lines = readFileSync(result.fenced.historyPath, 'utf8').trim().split('\n')
      expect(lines.length).toBeGreaterThan(500)
      expect(lines.every((line) => typeof (JSON.parse(line) as { time: unknown }).time === 'number')).toBe(true)

      // The report renders in headless Chromium into a non-trivial picture.
      const html = readFileSync(result.reportPath, 'utf8')
      expect(html).toContain('<svg')
      expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org)/)
      const profile = mkdtempSync(path.join(os.tmpdir(), 'fencelock-chromium-'))
      const shot = path.join(outDir, 'report.png')
      try {
        const run = spawnSync(
          env!.chromium,
          [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            `--user-data-dir=${profile}`,
            `--screenshot=${shot}`,
            '--window-size=1400,900',
            pathToFileURL(result.reportPath).href,
          ],
          { encoding: 'utf8', timeout: 60_000 },
        )
        expect(existsSync(shot), `chromium wrote no screenshot: ${run.stderr}`).toBe(true)
      } finally {
        rmSync(profile, { recursive: true, force: true })
      }
      expect(statSync(shot).size).toBeGreaterThan(30_000)
      const png = decodePng(readFileSync(shot))
      expect([png.width, png.height]).toEqual([1400, 900])
      const colors = new Set<string>()
      let banner = 0
      for (let y = 0; y < png.height; y += 3) {
        for (let x = 0; x < png.width; x += 3) {
          const [r, g, b] = png.pixel(x, y)
          colors.add(`${r >> 4},${g >> 4},${b >> 4}`)
          // The verdict banner at the top: solid green (#2e7d32) or red (#c62828).
          if (y < 120 && ((r === 0x2e && g === 0x7d && b === 0x32) || (r === 0xc6 && g === 0x28 && b === 0x28))) banner++
        }
      }
      expect(colors.size).toBeGreaterThan(40)
      expect(banner).toBeGreaterThan(1_000)
    } finally {
      rmSync(outDir, { recursive: true, force: true })
    }
  }, 180_000)
  it('tries a control run that shows nothing again, CONTROL_ATTEMPTS times, then exits 3 and says so', async () => {
    // 100 ms of fault phase: the first fault is planned at 200 ms or later, so no run gets one, and
    // a control without faults cannot show damage however often it is tried.
    const outDir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-verify-nofault-'))
    const lines: string[] = []
    const log = console.log
    console.log = (...args: unknown[]) => void lines.push(args.join(' '))
    try {
      const noFaults = { seed: QUICK_SEED, chaosMs: 100, quorum: false, nodes: 1, workers: 2, ttl: 1_000 } as const
      const result = await verify({ ...noFaults, guard: 'claim', control: true, outDir, quiet: false })
      console.log = log
      expect(result.fenced.check.stats.faults).toEqual({})
      expect(result.control!.attempts).toBe(CONTROL_ATTEMPTS)
      expect(result.control!.check.violations.filter((v) => v.startsWith('(a)'))).toEqual([])
      expect(result.exitCode).toBe(3)
      const dir = path.dirname(result.reportPath)
      for (let n = 2; n <= CONTROL_ATTEMPTS; n++) expect(existsSync(path.join(dir, `history-control-${n}.jsonl`))).toBe(true)
      const summary = JSON.parse(readFileSync(path.join(dir, 'summary.json'), 'utf8')) as { runs: { label: string }[] }
      expect(summary.runs.map((r) => r.label)).toEqual(['fenced', 'control', 'control (attempt 2)', 'control (attempt 3)'])
      expect(lines.filter((l) => l.includes('running it again'))).toHaveLength(CONTROL_ATTEMPTS - 1)
      expect(lines.some((l) => l.includes(`${CONTROL_ATTEMPTS} control runs showed no safety violation`))).toBe(true)
    } finally {
      console.log = log
      rmSync(outDir, { recursive: true, force: true })
    }
  }, 120_000)
})
