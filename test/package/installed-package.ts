// The package as a consumer installs it, for the tests of test/package/ that load or type-check
// the built entry points.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const root = fileURLToPath(new URL('../..', import.meta.url))

/**
 * A hash of what the build reads: every file under src/ (the embedded scripts included) and
 * scripts/ (the CommonJS entries and the declaration steps tsup.config.ts runs), package.json,
 * tsup.config.ts.
 */
function sourceHash(): string {
  const hash = createHash('sha256')
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const file = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(file)
      else hash.update(`${path.relative(root, file)}\0`).update(readFileSync(file))
    }
  }
  walk(path.join(root, 'src'))
  walk(path.join(root, 'scripts'))
  for (const file of ['package.json', 'tsup.config.ts', 'tsconfig.json']) hash.update(file).update(readFileSync(path.join(root, file)))
  return hash.digest('hex').slice(0, 16)
}

/**
 * `npm run build`'s dist/ (declarations included) of the sources as they are now, built once and
 * kept under node_modules/.cache by the sources' hash: the test files that install the package
 * (types, redlock-entry, examples, runtimes) share one build instead of running tsup each. Two
 * that start at once may both build; the first to finish is kept.
 */
export async function builtDist(): Promise<string> {
  const cache = path.join(root, 'node_modules', '.cache', 'fencelock-build')
  const dist = path.join(cache, sourceHash())
  if (existsSync(dist)) return dist
  mkdirSync(cache, { recursive: true })
  const scratch = mkdtempSync(path.join(cache, 'building-'))
  try {
    await promisify(execFile)('npx', ['tsup', '--silent', '--out-dir', scratch], { cwd: root, maxBuffer: 16 << 20 })
    try {
      renameSync(scratch, dist)
    } catch (err) {
      if (!existsSync(dist)) throw err // else another test process finished first: its build is the same
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
  return dist
}

/**
 * Installs the package (builtDist) into a fresh directory `prefix…` (so a concurrent `dist/` build
 * cannot race with it) as `fencelock`. The directory is inside the repository's node_modules, so
 * the client packages and @types/node resolve from there, and `fencelock` from the directory's own
 * node_modules; its package.json has no name, so nothing in it resolves `fencelock` to the
 * repository itself. `type` is the package.json `type` of the directory. Returns the directory.
 */
export async function installBuiltPackage(prefix: string, options: { type?: 'module' } = {}): Promise<string> {
  const cache = path.join(root, 'node_modules', '.cache')
  mkdirSync(cache, { recursive: true })
  const dir = mkdtempSync(path.join(cache, prefix))
  const pkg = path.join(dir, 'node_modules', 'fencelock')
  cpSync(await builtDist(), path.join(pkg, 'dist'), { recursive: true })
  copyFileSync(path.join(root, 'package.json'), path.join(pkg, 'package.json'))
  writeFileSync(path.join(dir, 'package.json'), options.type === undefined ? '{ "private": true }\n' : `{ "private": true, "type": "${options.type}" }\n`)
  return dir
}
