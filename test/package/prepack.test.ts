// `npm pack` refuses a dist/ that lacks a file the package's exports map (or main, module, types,
// bin) names, such as the declarations of a build cut short; and the build itself prints no
// warning (the otel entry's CommonJS output once warned "import.meta is not available").
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lowPriority } from '../../harness/low-priority.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../..', import.meta.url))

/** Output and exit code of a command that may fail. */
async function outcome(file: string, args: string[], cwd: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(...lowPriority(file, args), { cwd, maxBuffer: 16 << 20 })
    return { code: 0, output: `${stdout}${stderr}` }
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string }
    return { code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` }
  }
}

describe('prepack: the files the package names exist', () => {
  let project: string
  let build: { code: number; output: string }
  beforeAll(async () => {
    project = mkdtempSync(path.join(os.tmpdir(), 'fencelock-prepack-'))
    // The build as `npm run build` makes it (not silent: its warnings are part of what is tested).
    build = await outcome('npx', ['tsup', '--out-dir', path.join(project, 'dist')], root)
    cpSync(path.join(root, 'package.json'), path.join(project, 'package.json'))
    cpSync(path.join(root, 'CHANGELOG.md'), path.join(project, 'CHANGELOG.md'))
    mkdirSync(path.join(project, 'scripts'))
    cpSync(path.join(root, 'scripts'), path.join(project, 'scripts'), { recursive: true })
  }, 300_000)
  afterAll(() => rmSync(project, { recursive: true, force: true }))

  it('the build succeeds without a warning', () => {
    expect(build.code).toBe(0)
    expect(build.output).not.toMatch(/import\.meta/)
    expect(build.output).not.toMatch(/\bwarn(ing)?\b/i)
  })

  it('npm pack goes ahead with a whole dist/, and refuses one without a declaration file, naming it', { timeout: 120_000 }, async () => {
    const whole = await outcome('npm', ['pack', '--dry-run', '--ignore-scripts=false'], project)
    expect(whole.code, whole.output).toBe(0)
    rmSync(path.join(project, 'dist', 'redlock.d.cts'))
    const cut = await outcome('npm', ['pack', '--dry-run', '--ignore-scripts=false'], project)
    expect(cut.code).not.toBe(0)
    expect(cut.output).toContain('dist/redlock.d.cts')
  })
})
