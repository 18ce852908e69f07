// fencelock as its users run it: the built package (dist/, which `npm run bench` builds first),
// not the sources through the TypeScript loader the bench itself runs under. That loader keeps
// function names by wrapping every closure the library creates in a helper call (measured on A:
// about 5 µs of client CPU per acquire+release, 9% of its user CPU), a cost the published package
// does not have; the peers run as published JavaScript too.
import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type * as Source from '../src/index.js'

const built = new URL('../dist/index.js', import.meta.url)
if (!existsSync(fileURLToPath(built))) throw new Error('bench: dist/index.js is missing; run `npm run build` first (`npm run bench` does)')

/** The public API of the built package, typed as the sources declare it. */
export const fencelock = (await import(built.href)) as typeof Source

/**
 * Another build of fencelock to pair against this one in the same run (`FENCELOCK_BENCH_BEFORE`:
 * a folder holding that build's index.js, e.g. a copy of dist/ made before a change): its row,
 * "fencelock before", runs beside fencelock's in A, B, C and Q, interleaved round by round.
 */
export const BEFORE_DIR: string | undefined = process.env.FENCELOCK_BENCH_BEFORE || undefined

export const fencelockBefore: typeof Source | undefined = BEFORE_DIR
  ? ((await import(pathToFileURL(path.join(path.resolve(BEFORE_DIR), 'index.js')).href)) as typeof Source)
  : undefined
