// The published types, as a strict consumer sees them: the package is built (into a private
// directory, so a concurrent `dist/` build cannot race with it), installed under the name
// `fencelock` next to the real client packages, and the consumer files in test/types/ are
// type-checked with skipLibCheck off, with and without `lib: DOM`. They pass every supported
// client major (ioredis 5/6, iovalkey, node-redis 4/5/6: client, cluster, sentinel) as `redis`,
// and a URL string must not compile (`@ts-expect-error`).
import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const root = fileURLToPath(new URL('..', import.meta.url))
const sources = path.join(root, 'test', 'types')

/** tsc's output when it fails, so the test report shows the type errors themselves. */
async function tsc(project: string): Promise<string> {
  try {
    await run('npx', ['tsc', '-p', project], { cwd: path.dirname(project), maxBuffer: 16 << 20 })
    return ''
  } catch (err) {
    const { stdout, stderr, message } = err as { stdout?: string; stderr?: string; message: string }
    return `${stdout ?? ''}${stderr ?? ''}` || message
  }
}

describe('published types', () => {
  let project: string
  beforeAll(async () => {
    // Inside the repository's node_modules, so that the consumer resolves the client packages
    // and @types/node from there, and `fencelock` from its own node_modules.
    const cache = path.join(root, 'node_modules', '.cache')
    mkdirSync(cache, { recursive: true })
    project = mkdtempSync(path.join(cache, 'fencelock-types-'))
    const pkg = path.join(project, 'node_modules', 'fencelock')
    await run('npx', ['tsup', '--silent', '--out-dir', path.join(pkg, 'dist')], { cwd: root, maxBuffer: 16 << 20 })
    copyFileSync(path.join(root, 'package.json'), path.join(pkg, 'package.json'))
    writeFileSync(path.join(project, 'package.json'), '{ "private": true, "type": "module" }\n')
    for (const file of readdirSync(sources)) {
      // The first line turns off the repository's own check of these files (it cannot resolve
      // `fencelock` without a build); the consumer project checks them in full.
      const text = readFileSync(path.join(sources, file), 'utf8').replace(/^\/\/ @ts-nocheck.*\n/, '')
      writeFileSync(path.join(project, file), text)
    }
  }, 300_000)
  afterAll(() => {
    if (project) rmSync(project, { recursive: true, force: true })
  })

  it('import nothing from the client packages, neither at run time nor in the types', () => {
    const dist = path.join(project, 'node_modules', 'fencelock', 'dist')
    for (const file of ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts']) {
      const text = readFileSync(path.join(dist, file), 'utf8')
      expect(text, file).not.toMatch(/(from\s+|require\(|import\()['"](ioredis|iovalkey|redis|@redis\/[^'"]*)['"]/)
    }
  })

  it('compile for a strict consumer with lib DOM (ESM and CommonJS)', { timeout: 300_000 }, async () => {
    expect(await tsc(path.join(project, 'tsconfig.json'))).toBe('')
  })

  it('compile for a strict consumer without lib DOM (lib ES2022, types node)', { timeout: 300_000 }, async () => {
    expect(await tsc(path.join(project, 'tsconfig.no-dom.json'))).toBe('')
  })
})
