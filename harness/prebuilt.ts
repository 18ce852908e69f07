// TypeScript programs the tests start as processes (the CLI, workers), bundled once per test run.
// Started through tsx, each process spends most of a second of CPU compiling before it runs; the
// suite starts hundreds, which two cores feel. The test run's global setup bundles them with
// esbuild into a folder of its own, `.cache/prebuilt-<pid>/` (two test runs in one checkout must
// not delete each other's), names it in FENCELOCK_PREBUILT and removes it when the run ends;
// `nodeArgsFor` then runs the bundle, and falls back to tsx for anything not bundled (or outside a
// test run).
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** The programs bundled: what the tests start as separate processes. */
export const PREBUILT_ENTRIES = [
  'src/cli/main.ts',
  'harness/workers/worker.ts',
  'harness/workers/reader-worker.ts',
  'harness/workers/semaphore-worker.ts',
  'harness/workers/transfer-worker.ts',
  'verify/worker.ts',
  'verify/multi-worker.ts',
  'verify/semaphore-worker.ts',
  'verify/election-worker.ts',
] as const

// Two folders below the repository, as src/cli/main.ts is: the CLI finds package.json at ../../.
const bundleName = (entry: string) => `${entry.replace(/\.ts$/, '').replaceAll('/', '__')}.mjs`

/** `node` arguments that run the program `file` (an absolute path or one relative to the repository). */
export function nodeArgsFor(file: string): string[] {
  const dir = process.env.FENCELOCK_PREBUILT
  if (dir) {
    const bundle = path.join(dir, bundleName(path.relative(ROOT, path.resolve(ROOT, file))))
    if (existsSync(bundle)) return [bundle]
  }
  return ['--import', 'tsx', file]
}

/** Bundles every entry into `.cache/prebuilt-<pid>/` (packages stay external, found in node_modules) and returns the folder. */
export async function prebuild(): Promise<string> {
  const { build } = await import('esbuild')
  const dir = path.join(ROOT, '.cache', `prebuilt-${process.pid}`)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  await Promise.all(
    PREBUILT_ENTRIES.map((entry) =>
      build({
        entryPoints: [path.join(ROOT, entry)],
        outfile: path.join(dir, bundleName(entry)),
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        packages: 'external',
        logLevel: 'warning',
      }),
    ),
  )
  return dir
}

/** Removes a folder that `prebuild` made. */
export function removePrebuilt(dir: string): void {
  rmSync(dir, { recursive: true, force: true })
}
