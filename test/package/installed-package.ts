// The package as a consumer installs it, for the tests of test/package/ that load or type-check
// the built entry points.
import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const root = fileURLToPath(new URL('../..', import.meta.url))

/**
 * Builds the package into a fresh directory `prefix…` (so a concurrent `dist/` build cannot race
 * with it) and installs it there as `fencelock`. The directory is inside the repository's
 * node_modules, so the client packages and @types/node resolve from there, and `fencelock` from
 * the directory's own node_modules; its package.json has no name, so nothing in it resolves
 * `fencelock` to the repository itself. `dts: false` skips the declarations (to run, not to
 * type-check); `type` is the package.json `type` of the directory. Returns the directory.
 */
export async function installBuiltPackage(prefix: string, options: { dts?: boolean; type?: 'module' } = {}): Promise<string> {
  const cache = path.join(root, 'node_modules', '.cache')
  mkdirSync(cache, { recursive: true })
  const dir = mkdtempSync(path.join(cache, prefix))
  const pkg = path.join(dir, 'node_modules', 'fencelock')
  const dts = options.dts === false ? ['--no-dts'] : []
  await promisify(execFile)('npx', ['tsup', '--silent', ...dts, '--out-dir', path.join(pkg, 'dist')], { cwd: root, maxBuffer: 16 << 20 })
  copyFileSync(path.join(root, 'package.json'), path.join(pkg, 'package.json'))
  writeFileSync(path.join(dir, 'package.json'), options.type === undefined ? '{ "private": true }\n' : `{ "private": true, "type": "${options.type}" }\n`)
  return dir
}
