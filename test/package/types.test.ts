// The published types, as consumers see them: the package is built (into a private directory, so
// a concurrent `dist/` build cannot race with it), installed under the name `fencelock` next to
// the real client packages, and the consumer files in test/package/types/ are type-checked by TypeScript 5
// (`typescript`) and TypeScript 7 (`typescript7`, what `npm i -D typescript` installs today):
// - strictly (skipLibCheck off), with and without `lib: DOM`, passing every supported client major
//   (ioredis 5/6, iovalkey, node-redis 4/5/6: client, cluster, sentinel) as `redis`, a URL string
//   must not compile (`@ts-expect-error`);
// - a file importing only fencelock, ESM and CommonJS, under each compiler's own `tsc --init`
//   (`"types": []`: no @types is visible unless a declaration asks for it) and under a tsconfig
//   that sets nothing but `module: nodenext`.
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installBuiltPackage } from './installed-package.js'
import { TSC, typeErrors } from '../../harness/low-priority.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../..', import.meta.url))
const sources = path.join(root, 'test', 'package', 'types')

// Each by its own path: both packages have a `tsc` bin, so `npx tsc` names whichever npm linked last.
const compilers = [
  { name: 'TypeScript 5', major: 5, tsc: TSC },
  { name: 'TypeScript 7', major: 7, tsc: path.join(root, 'node_modules', 'typescript7', 'bin', 'tsc') },
] as const
type Compiler = (typeof compilers)[number]

/** tsc's output when it fails, so the test report shows the type errors themselves. */
const tsc = (compiler: Compiler, args: string[], cwd: string): Promise<string> => typeErrors(args, cwd, compiler.tsc)

const onlyFencelock = ['only-fencelock.mts', 'only-fencelock.cts']

/** Consumers type-checked as ESM and, copied under a .cts name, as CommonJS (`require` resolves dist/*.d.cts): one source each. */
const alsoAsCommonJs: Record<string, string> = { 'redis-semaphore.mts': 'redis-semaphore.cts' }

describe('published types', () => {
  let project: string
  beforeAll(async () => {
    // The consumer resolves the client packages and @types/node from the repository, and
    // `fencelock` from its own node_modules.
    project = await installBuiltPackage('fencelock-types-', { type: 'module' })
    for (const file of readdirSync(sources)) {
      // The first line turns off the repository's own check of these files (it cannot resolve
      // `fencelock` without a build); the consumer project checks them in full.
      const text = readFileSync(path.join(sources, file), 'utf8').replace(/^\/\/ @ts-nocheck.*\n/, '')
      writeFileSync(path.join(project, file), text)
      const commonJs = alsoAsCommonJs[file]
      if (commonJs) writeFileSync(path.join(project, commonJs), text)
    }
    for (const compiler of compilers) {
      // `tsc --init` writes ./tsconfig.json: one directory per compiler, extended below.
      const init = path.join(project, `init-${compiler.major}`)
      mkdirSync(init)
      expect(await tsc(compiler, ['--init'], init)).toBe('')
      expect(existsSync(path.join(init, 'tsconfig.json'))).toBe(true)
      const extend = { extends: `./init-${compiler.major}/tsconfig.json`, compilerOptions: { noEmit: true, skipLibCheck: false }, files: onlyFencelock }
      writeFileSync(path.join(project, `tsconfig.init-${compiler.major}.json`), JSON.stringify(extend, null, 2))
    }
    const bare = { compilerOptions: { module: 'nodenext', noEmit: true }, files: onlyFencelock }
    writeFileSync(path.join(project, 'tsconfig.bare.json'), JSON.stringify(bare, null, 2))
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

  // Concurrent: each check is its own tsc process, mostly waiting on the other file the runner has going.
  describe.concurrent.each(compilers)('$name', (compiler) => {
    it('is the version it is named for', async () => {
      const { stdout } = await run(process.execPath, [compiler.tsc, '--version'])
      expect(stdout).toMatch(new RegExp(`^Version ${compiler.major}\\.`))
    })

    it('compiles a strict consumer with lib DOM (ESM and CommonJS)', { timeout: 300_000 }, async () => {
      expect(await tsc(compiler, ['-p', 'tsconfig.json'], project)).toBe('')
    })

    it('compiles a strict consumer without lib DOM (lib ES2022, types node)', { timeout: 300_000 }, async () => {
      expect(await tsc(compiler, ['-p', 'tsconfig.no-dom.json'], project)).toBe('')
    })

    it("compiles a file importing only fencelock under this compiler's tsc --init (types: [])", { timeout: 300_000 }, async () => {
      expect(await tsc(compiler, ['-p', `tsconfig.init-${compiler.major}.json`], project)).toBe('')
    })

    it('compiles a file importing only fencelock with no option but module nodenext', { timeout: 300_000 }, async () => {
      expect(await tsc(compiler, ['-p', 'tsconfig.bare.json'], project)).toBe('')
    })
  })
})
