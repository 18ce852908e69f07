// What the quick-form verify tests share: whether PostgreSQL is there (CI must never skip), and a
// quick run of `npm run verify` (one Redis node, 4 workers, a 1 s ttl, the control run) in a
// scratch directory that is removed after its checks, with both runs' verdicts in the test's log.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { expect } from 'vitest'
import { clockTools } from '../../harness/faketime.js'
import { requireRedisOrSkip } from '../../harness/redis-server.js'
import type { CheckResult } from '../../verify/checker.js'
import { verify, type VerifyOptions, type VerifyResult } from '../../verify/main.js'
import { findPg } from '../../verify/pg-target.js'

/** Redis and PostgreSQL both there; a missing PostgreSQL fails loudly in CI, elsewhere it skips with the reason. */
export async function pgReady(test: string): Promise<boolean> {
  if (!requireRedisOrSkip()) return false
  const pg = await findPg()
  if (!('error' in pg)) return true
  if (process.env.CI === 'true') throw new Error(`[fencelock ${test} test] ${pg.error}. In CI this is fatal: install it instead of skipping.`)
  console.warn(`[fencelock ${test} test] skipping: ${pg.error}`)
  return false
}

/** Whether the quick runs get their server clock fault (libfaketime and a libc-malloc build there; CI must have them). */
export const clockFaults = (() => {
  const tools = clockTools()
  return !('missing' in tools)
})()

/**
 * The clock fault of a quick run: one in each run; the guarded run stays safe through it (its own
 * checks), and the control's step back past its 2 s fence retention must show as fences not above
 * earlier ones.
 */
function clockChecks(guarded: CheckResult, control: CheckResult): void {
  expect(guarded.stats.faults.clock).toBe(1)
  expect(control.stats.faults.clock).toBe(1)
  expect(control.violations.some((v) => /got a fence not above one granted before|fences handed out twice/.test(v))).toBe(true)
}

export interface QuickRun {
  /** The log's tag and the scratch directory's name: `[verify multi]`, `fencelock-verify-multi-`. */
  tag: string
  /** What the run with the guard on is called in the log. Default: 'fenced'. */
  guarded?: string
  /** The run's own options: its seed, fault phase, primitive and what the primitive takes. */
  options: Pick<VerifyOptions, 'seed' | 'chaosMs'> &
    Partial<Pick<VerifyOptions, 'primitive' | 'limit' | 'controlKind' | 'failover' | 'replicaNodes' | 'ttl' | 'clock'>>
}

/** Runs verify's quick form and hands the guarded run's check, the control run's and the result to `checks`. */
export async function quickVerify(run: QuickRun, checks: (guarded: CheckResult, control: CheckResult, result: VerifyResult) => void): Promise<void> {
  const outDir = mkdtempSync(path.join(os.tmpdir(), `fencelock-${run.tag.replace(' ', '-')}-`))
  // A run may leave the clock fault out (the two-replica failover, whose control must fail by the failover alone).
  const clock = clockFaults && run.options.clock !== false
  try {
    const result = await verify({
      quorum: false,
      nodes: 1,
      workers: 4,
      ttl: 1_000,
      guard: 'claim',
      control: true,
      outDir,
      quiet: true,
      ...run.options,
      clock,
    })
    const guarded = result.fenced.check
    const control = result.control!.check
    const summary = (label: string, c: CheckResult) => `${label}: ${c.violations.join(' | ') || 'no violations'}`
    const tries = result.control!.attempts > 1 ? ` (try ${result.control!.attempts})` : ''
    console.log(`[${run.tag}] ${summary(run.guarded ?? 'fenced', guarded)}\n[${run.tag}] ${summary(`control${tries}`, control)}`)
    checks(guarded, control, result)
    // Failover mode too: its two data nodes run under libfaketime, and the primary's clock steps.
    if (clock) clockChecks(guarded, control)
  } finally {
    rmSync(outDir, { recursive: true, force: true })
  }
}
