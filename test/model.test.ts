// The SPIN models of model/ (docs/model.md): each correct model verifies with no error within its
// bound, and each broken variant (one safety rule removed) yields a counterexample, whose trail is
// printed. Needs `spin` and `gcc`; CI fails without them, elsewhere the suite is skipped.
import { describe, expect, it } from 'vitest'
import { missingTools, runOne, runs } from '../scripts/model.mjs'

function toolsOrSkip(): boolean {
  const missing = missingTools()
  if (!missing) return true
  const reason = `${missing} not found on PATH; the model-checking suite needs SPIN and a C compiler (apt-get install spin gcc)`
  if (process.env.CI === 'true') throw new Error(`[fencelock tests] ${reason}. In CI this is fatal: install them instead of skipping.`)
  console.warn(`[fencelock tests] skipping the SPIN models: ${reason}.`)
  return false
}

describe.skipIf(!toolsOrSkip())('SPIN models (bounded)', () => {
  for (const run of runs.filter((r) => r.expect === 'pass')) {
    it(`${run.id} verifies with no error`, { timeout: 120_000 }, () => {
      const result = runOne(run)
      console.log(`${run.id}: ${result.states} states, depth ${result.depth}, ${result.seconds} s, errors ${result.errors}`)
      if (result.trail) console.log(result.trail.join('\n'))
      expect(result.errors).toBe(0)
      expect(result.states).toBeGreaterThan(1000)
    })
  }

  for (const run of runs.filter((r) => r.expect === 'fail')) {
    it(`${run.id} (${run.rule}) yields a counterexample`, { timeout: 120_000 }, () => {
      const result = runOne(run)
      console.log(`${run.id}: counterexample after ${result.states} states, ${result.seconds} s; ${result.violated}\n  ${(result.trail ?? []).join('\n  ')}`)
      expect(result.errors).toBeGreaterThan(0)
      // The replayed trail says who did what: at least one client step and the broken property.
      expect(result.trail?.some((line) => /violated/.test(line))).toBe(true)
    })
  }
})
