// The published shape: both builds load, types resolve under every module mode, publint and attw
// are happy, the library's code is in the tarball once (dist/cli.js imports dist/index.js), and
// the tarball holds the build and nothing else. The one test file that builds into dist/.
import { execFile, execFileSync } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { beforeAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const dist = path.join(root, 'dist')
const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 16 << 20 })
const runAsync = async (cmd: string, args: string[]) =>
  (await promisify(execFile)(cmd, args, { cwd: root, encoding: 'utf8', maxBuffer: 16 << 20 })).stdout
const read = (file: string) => readFileSync(path.join(dist, file), 'utf8')
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }

/**
 * Upper bound of the packed tarball, in bytes. Measured: about 367 kB (60% of it the source maps,
 * which carry the TypeScript sources); the margin leaves room for growth, not for a second copy of
 * the library in dist/cli.js (+130 kB packed) or a shipped src/ (+150 kB).
 */
const MAX_PACKED = 450_000

interface Packed {
  size: number
  unpackedSize: number
  entryCount: number
  files: { path: string; size: number }[]
}

describe('package', () => {
  beforeAll(() => {
    run('npx', ['tsup', '--silent'])
  }, 180_000)

  it('loads as ESM and CommonJS, and passes publint and attw', { timeout: 120_000 }, async () => {
    const esm = await import(new URL('../dist/index.js', import.meta.url).href)
    const cjs = createRequire(import.meta.url)('../dist/index.cjs')
    for (const mod of [esm, cjs]) {
      expect(typeof mod.createLocks).toBe('function')
      expect(typeof mod.fencedSet).toBe('function')
      expect(new mod.LockTimeoutError('r', 5).code).toBe('LOCK_TIMEOUT')
    }
    const [publint] = await Promise.all([
      runAsync('npx', ['publint', '--strict']),
      // attw exits non-zero on any problem for the node16 (CJS and ESM) and bundler resolutions.
      runAsync('npx', ['attw', '--pack', '.', '--profile', 'node16', '--format', 'ascii']),
    ])
    expect(publint).not.toMatch(/error|warning/i)
  })

  it('has the library code once: dist/cli.js imports ./index.js instead of bundling it', () => {
    const cli = read('cli.js')
    expect(cli).toMatch(/from "\.\/index\.js"/)
    // Every source of the CLI's bundle is a file of src/cli/ (no library module, no package.json).
    const sources = (JSON.parse(read('cli.js.map')) as { sources: string[] }).sources
    expect(sources.length).toBeGreaterThan(0)
    expect(sources.filter((s) => !/(^|\/)src\/cli\/.+\.ts$/.test(s))).toEqual([])
    expect(cli).not.toContain('devDependencies')
    // A public function and an internal one each live in exactly one of the ESM files.
    const esmFiles = readdirSync(dist).filter((f) => f.endsWith('.js'))
    for (const fn of ['function createLocks(', 'function lossOf(']) {
      expect(esmFiles.filter((f) => read(f).includes(fn)), fn).toEqual(['index.js'])
    }
  })

  it('runs the bin from the build', () => {
    expect(run('node', [path.join(dist, 'cli.js'), '--version']).trim()).toBe(pkg.version)
    expect(run('node', [path.join(dist, 'cli.js'), '--help'])).toMatch(/Usage: fencelock/)
  })

  it(`packs dist/, README, LICENSE and package.json only, under ${MAX_PACKED / 1000} kB`, { timeout: 60_000 }, () => {
    const [packed] = JSON.parse(run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'])) as Packed[]
    const files = packed!.files.map((f) => f.path).sort()
    expect(files.filter((f) => !/^(dist\/[^/]+|README\.md|LICENSE|package\.json)$/.test(f))).toEqual([])
    for (const entry of ['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts', 'dist/otel.js', 'dist/otel.cjs', 'dist/cli.js']) {
      expect(files).toContain(entry)
    }
    expect(files.filter((f) => /test|bench|verify|\.lua$/.test(f))).toEqual([])
    expect(packed!.size).toBeLessThan(MAX_PACKED)
  })
})
