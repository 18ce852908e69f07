// The package's version, read at run time from the package.json next to the code, so that the
// build does not embed package.json: ../package.json from dist/cli.js, ../../package.json from
// src/cli/main.ts (run under tsx).
import { readFileSync } from 'node:fs'

const CANDIDATES = ['../package.json', '../../package.json']

/** The version of the fencelock package this file belongs to, or 'unknown' if none is found. */
export function packageVersion(from: string = import.meta.url): string {
  for (const candidate of CANDIDATES) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(candidate, from), 'utf8')) as { name?: unknown; version?: unknown }
      if (pkg.name === 'fencelock' && typeof pkg.version === 'string') return pkg.version
    } catch {}
  }
  return 'unknown'
}
