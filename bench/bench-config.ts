// How long and how much each scenario of `npm run bench` measures (a full run and --quick), which
// libraries it runs (--lib), and the peer lists the scenarios share.
import type { LibSpec } from './libs.js'
import { BEFORE_DIR } from './library.js'

export interface Config {
  quick: boolean
  latencyN: number
  latencyRounds: number
  throughputMs: number
  contendMs: number
  idleMs: number
  scaleMs: number
  memoryN: number
  quorumN: number
  quorumMs: number
  /** --lib filter (development): only these library kinds. */
  libs?: ReadonlySet<string>
}

export const chosen = (cfg: Config, list: LibSpec[]): LibSpec[] => (cfg.libs ? list.filter((l) => cfg.libs?.has(l.kind)) : list)

export const FULL: Config = {
  quick: false,
  latencyN: 5_000,
  latencyRounds: 3,
  throughputMs: 1_500,
  contendMs: 10_000,
  idleMs: 5_000,
  scaleMs: 5_000,
  memoryN: 10_000,
  quorumN: 2_000,
  quorumMs: 5_000,
}

export const QUICK: Config = {
  quick: true,
  latencyN: 500,
  latencyRounds: 1,
  throughputMs: 400,
  contendMs: 1_500,
  idleMs: 1_000,
  scaleMs: 1_000,
  memoryN: 1_000,
  quorumN: 200,
  quorumMs: 1_000,
}

/** With FENCELOCK_BENCH_BEFORE set, the other build's row right after fencelock's (paired). */
export const BEFORE: LibSpec[] = BEFORE_DIR ? [{ kind: 'fencelock-before' }] : []

/** Single-node peers, at their defaults (uncontended scenarios: retry settings do not matter). */
export const SINGLE: LibSpec[] = [
  { kind: 'fencelock' },
  ...BEFORE,
  { kind: 'seed' },
  { kind: 'redlock4' },
  { kind: 'redlock5' },
  { kind: 'sesame' },
  { kind: 'semaphore' },
]

/** Contended and idle scenarios: every peer at its defaults and tuned to a 10 ms retry. */
export const CONTENDED: LibSpec[] = [
  { kind: 'fencelock' },
  ...BEFORE,
  { kind: 'seed' },
  { kind: 'seed', retry: 10 },
  { kind: 'redlock4' },
  { kind: 'redlock4', retry: 10 },
  { kind: 'redlock5' },
  { kind: 'redlock5', retry: 10 },
  { kind: 'sesame' },
  { kind: 'sesame', retry: 10 },
  // redis-semaphore already retries every 10 ms by default: its defaults are its tuned setting.
  { kind: 'semaphore' },
]

/** Tuned to the fastest sensible retry: explicitly 10 ms, or a library whose default is 10 ms. */
export const isTuned = (spec: LibSpec): boolean => spec.retry !== undefined || spec.kind === 'semaphore' || spec.kind === 'semaphore-redlock'
