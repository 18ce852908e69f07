// The import rules of ARCHITECTURE.md, checked on the code: every relative import in src/ goes
// from a layer to one it may use, nothing in src/ imports in a circle, and the tests, the fault
// harness and the benchmarks share one harness/ folder.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** Who may import whom, by the first folder under src/ (`index` is src/index.ts). */
const MAY_IMPORT: Record<string, readonly string[]> = {
  cli: ['index'],
  otel: ['index', 'errors', 'util'],
  index: ['api', 'primitives', 'runtime', 'guards', 'redis', 'util', 'errors', 'topology'],
  api: ['primitives', 'runtime', 'topology', 'redis', 'util', 'errors'],
  // Drop-in entry points, another library's API each (fencelock/redlock over the same parts as
  // createLocks; fencelock/redis-semaphore over the adapters and its own scripts); nothing imports them.
  compat: ['primitives', 'runtime', 'topology', 'redis', 'lua', 'util', 'errors'],
  guards: ['redis', 'lua', 'util', 'errors'],
  primitives: ['runtime', 'topology', 'lua', 'util', 'errors'],
  runtime: ['topology', 'util', 'errors'],
  topology: ['redis', 'lua', 'util', 'errors'],
  redis: ['lua', 'util', 'errors'],
  lua: [],
  util: ['errors'],
  errors: [],
}

/** The runtime knows a topology only by its contract. */
const RUNTIME_MAY_USE_OF_TOPOLOGY = ['src/topology/backend.ts', 'src/topology/wake-message.ts']

/** Below every layer, one file every layer may use: the callback convention (util/into.ts). */
const CONVENTION = 'src/util/into.ts'

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? walk(p) : /\.(ts|mts|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : []
  })
}

const rel = (p: string) => path.relative(root, p).split(path.sep).join('/')

/** Relative imports of a file, resolved to repo paths (`.js` → `.ts`). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const found: string[] = []
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/g)) {
    const spec = m[1] ?? m[2]!
    found.push(rel(path.resolve(path.dirname(file), spec)).replace(/\.js$/, '.ts'))
  }
  return found
}

const layerOf = (file: string): string => {
  const parts = file.split('/')
  if (parts[0] !== 'src') return parts[0]!
  return parts.length === 2 ? 'index' : parts[1]!
}

const sources = walk(path.join(root, 'src')).map(rel)
const graph = new Map(sources.map((f) => [f, importsOf(path.join(root, f))]))

describe('ARCHITECTURE.md: the layers and who may import whom', () => {
  it('every import in src/ goes to its own folder or a layer it may use', () => {
    const broken: string[] = []
    for (const [file, imports] of graph) {
      const from = layerOf(file)
      for (const target of imports) {
        const to = layerOf(target)
        if (to === from || target === CONVENTION) continue
        if (!MAY_IMPORT[from]?.includes(to)) broken.push(`${file} -> ${target} (${from} may not import ${to})`)
        else if (from === 'runtime' && to === 'topology' && !RUNTIME_MAY_USE_OF_TOPOLOGY.includes(target))
          broken.push(`${file} -> ${target} (the runtime sees a topology only through its contract)`)
      }
    }
    expect(broken).toEqual([])
  })

  it('a primitive imports no other primitive: each kind is one folder', () => {
    const broken: string[] = []
    for (const [file, imports] of graph) {
      const kind = file.startsWith('src/primitives/') ? file.split('/')[2] : undefined
      if (!kind || !file.includes(`/primitives/${kind}/`)) continue
      for (const target of imports) {
        const other = target.startsWith('src/primitives/') ? target.split('/')[2] : undefined
        if (other && other !== kind && target.includes(`/primitives/${other}/`)) broken.push(`${file} -> ${target}`)
      }
    }
    expect(broken).toEqual([])
  })

  it('ARCHITECTURE.md names every folder of src/ in its map', () => {
    const map = readFileSync(path.join(root, 'ARCHITECTURE.md'), 'utf8')
    const folders = [...new Set(sources.map((f) => path.posix.dirname(f)))].filter((d) => d !== 'src' && !d.includes('/embedded'))
    expect(folders.length).toBeGreaterThan(15)
    expect(folders.filter((d) => !map.includes(`\`${d}/\``))).toEqual([])
  })

  it('only the entry files stand in src/ root', () => {
    expect(sources.filter((f) => f.split('/').length === 2)).toEqual(['src/index.ts'])
  })

  it('no import circles, in src/, harness/, verify/ or bench/', () => {
    const files = [...sources, ...['harness', 'verify', 'bench'].flatMap((d) => walk(path.join(root, d)).map(rel))]
    const edges = new Map(files.map((f) => [f, importsOf(path.join(root, f)).filter((t) => files.includes(t))]))
    const circles: string[] = []
    const state = new Map<string, 'open' | 'done'>()
    const visit = (f: string, trail: string[]) => {
      if (state.get(f) === 'done') return
      if (state.get(f) === 'open') {
        circles.push([...trail.slice(trail.indexOf(f)), f].join(' -> '))
        return
      }
      state.set(f, 'open')
      for (const t of edges.get(f) ?? []) visit(t, [...trail, f])
      state.set(f, 'done')
    }
    for (const f of files) visit(f, [])
    expect(circles).toEqual([])
  })

  it('the benchmarks use the built package: nothing of src/ but its types', () => {
    const broken: string[] = []
    for (const file of walk(path.join(root, 'bench')).map(rel)) {
      const text = readFileSync(path.join(root, file), 'utf8')
      for (const m of text.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?from\s+'([^']+)'/gm))
        if (!m[1] && /(^|\/)src\//.test(m[2]!)) broken.push(`${file} -> ${m[2]}`)
    }
    expect(broken).toEqual([])
  })

  it("tests, the fault harness and the benchmarks share harness/: none reaches into another's helpers", () => {
    const broken: string[] = []
    for (const dir of ['verify', 'bench', 'harness']) {
      for (const file of walk(path.join(root, dir)).map(rel)) {
        for (const target of importsOf(path.join(root, file))) if (target.startsWith('test/')) broken.push(`${file} -> ${target}`)
      }
    }
    expect(broken).toEqual([])
  })
})
