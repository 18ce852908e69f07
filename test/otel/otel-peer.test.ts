// fencelock/otel as an application without @opentelemetry/api gets it: the built entry (ESM and
// CommonJS, built by this test into a temporary directory, never dist/) installed as
// node_modules/fencelock in a directory where @opentelemetry/api cannot be resolved. Importing it
// must fail with a typed error that says what to install, not a raw ERR_MODULE_NOT_FOUND; with the
// API linked in, the same files load. No Redis: nothing here connects.
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** What importing `fencelock/otel` gave in a child process: `ok` with the export's type, or the error's name, code and message. */
interface Outcome {
  ok?: string
  name?: string
  code?: string
  message?: string
}

const ESM = `
try {
  const otel = await import('fencelock/otel')
  console.log(JSON.stringify({ ok: typeof otel.instrument }))
} catch (err) {
  console.log(JSON.stringify({ name: err.name, code: err.code, message: err.message }))
}`

const CJS = `
try {
  const otel = require('fencelock/otel')
  console.log(JSON.stringify({ ok: typeof otel.instrument }))
} catch (err) {
  console.log(JSON.stringify({ name: err.name, code: err.code, message: err.message }))
}`

describe('fencelock/otel without @opentelemetry/api', () => {
  let app: string
  let build: string

  beforeAll(() => {
    build = mkdtempSync(path.join(os.tmpdir(), 'fencelock-otel-build-'))
    execFileSync('npx', ['tsup', 'src/otel/index.ts', '--no-config', '--format', 'esm,cjs', '--target', 'node20', '--out-dir', build, '--silent'], {
      cwd: root,
      stdio: 'pipe',
    })
    app = mkdtempSync(path.join(os.tmpdir(), 'fencelock-otel-app-'))
    const pkg = path.join(app, 'node_modules', 'fencelock')
    mkdirSync(path.join(pkg, 'dist'), { recursive: true })
    cpSync(path.join(build, 'index.js'), path.join(pkg, 'dist', 'otel.js'))
    cpSync(path.join(build, 'index.cjs'), path.join(pkg, 'dist', 'otel.cjs'))
    writeFileSync(
      path.join(pkg, 'package.json'),
      JSON.stringify({ name: 'fencelock', type: 'module', exports: { './otel': { import: './dist/otel.js', require: './dist/otel.cjs' } } }),
    )
    writeFileSync(path.join(app, 'esm.mjs'), ESM)
    writeFileSync(path.join(app, 'cjs.cjs'), CJS)
  }, 120_000)
  afterAll(() => {
    if (app) rmSync(app, { recursive: true, force: true })
    if (build) rmSync(build, { recursive: true, force: true })
  })

  const run = (file: string): Outcome => {
    const env = { ...process.env }
    delete env.NODE_PATH
    delete env.NODE_OPTIONS // vitest's loader hooks are not the application's
    const child = spawnSync(process.execPath, [file], { cwd: app, env, encoding: 'utf8' })
    expect(child.stderr).toBe('')
    return JSON.parse(child.stdout) as Outcome
  }

  it('the application cannot resolve @opentelemetry/api (the set-up is what it claims)', () => {
    const child = spawnSync(process.execPath, ['-e', "require.resolve('@opentelemetry/api')"], {
      cwd: app,
      encoding: 'utf8',
      env: { ...process.env, NODE_PATH: '' },
    })
    expect(child.status).not.toBe(0)
    expect(child.stderr).toMatch(/Cannot find module '@opentelemetry\/api'/)
  })

  for (const [format, file] of [
    ['ESM import', 'esm.mjs'],
    ['CommonJS require', 'cjs.cjs'],
  ] as const) {
    it(`${format}: a typed error (MISSING_DEPENDENCY) that says to install @opentelemetry/api`, () => {
      const outcome = run(file)
      expect(outcome).toMatchObject({ name: 'MissingDependencyError', code: 'MISSING_DEPENDENCY' })
      expect(outcome.message).toMatch(/fencelock\/otel needs @opentelemetry\/api/)
      expect(outcome.message).toMatch(/npm install @opentelemetry\/api/)
    })
  }

  it('with @opentelemetry/api installed, the same files load (ESM and CommonJS)', () => {
    const linked = path.join(app, 'node_modules', '@opentelemetry')
    mkdirSync(linked, { recursive: true })
    symlinkSync(path.join(root, 'node_modules', '@opentelemetry', 'api'), path.join(linked, 'api'), 'dir')
    try {
      expect(run('esm.mjs')).toEqual({ ok: 'function' })
      expect(run('cjs.cjs')).toEqual({ ok: 'function' })
    } finally {
      rmSync(linked, { recursive: true, force: true })
    }
  })
})
