// The SPIN models of model/ (docs/evidence/model.md): each correct model verifies with no error within its
// bound, and each broken variant (one safety rule removed) yields a counterexample, whose trail is
// printed. Needs `spin` and `gcc`; CI fails without them, elsewhere the suite is skipped.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { missingTools, runs, type ModelResult } from '../../scripts/model.mjs'
import { lowPriority } from '../../harness/low-priority.js'

const script = fileURLToPath(new URL('../../scripts/model.mjs', import.meta.url))

function toolsOrSkip(): boolean {
  const missing = missingTools()
  if (!missing) return true
  const reason = `${missing} not found on PATH; the model-checking suite needs SPIN and a C compiler (apt-get install spin gcc)`
  if (process.env.CI === 'true') throw new Error(`[fencelock tests] ${reason}. In CI this is fatal: install them instead of skipping.`)
  console.warn(`[fencelock tests] skipping the SPIN models: ${reason}.`)
  return false
}

// Two verifiers at a time (two cores); each runs in its own process.
let running = 0
const queue: (() => void)[] = []
async function verify(id: string): Promise<ModelResult> {
  if (running >= 2) await new Promise<void>((resolve) => queue.push(resolve))
  running++
  try {
    const stdout = await new Promise<string>((resolve) => {
      execFile(...lowPriority(process.execPath, [script, '--json', '--id', id]), { maxBuffer: 16 * 1024 * 1024 }, (_err, out) => resolve(out))
    })
    const line = stdout.trim().split('\n').pop() ?? '{}'
    return JSON.parse(line) as ModelResult
  } finally {
    running--
    queue.shift()?.()
  }
}

// A hang guard, not a measurement: a test's time includes its wait for one of the two verifiers,
// and the verifiers run at the lowest priority, on what the suite's timed tests leave.
const HANG = 480_000

describe.skipIf(!toolsOrSkip())('SPIN models (bounded)', { concurrent: true }, () => {
  for (const run of runs.filter((r) => r.expect === 'pass')) {
    it(`${run.id} verifies with no error`, { timeout: HANG }, async () => {
      const result = await verify(run.id)
      console.log(`${run.id}: ${result.states} states, depth ${result.depth}, ${result.seconds} s, errors ${result.errors}`)
      if (result.trail) console.log(result.trail.join('\n'))
      expect(result.errors).toBe(0)
      expect(result.states).toBeGreaterThan(1000)
    })
  }

  for (const run of runs.filter((r) => r.expect === 'fail')) {
    it(`${run.id} (${run.rule}) yields a counterexample`, { timeout: HANG }, async () => {
      const result = await verify(run.id)
      console.log(`${run.id}: counterexample after ${result.states} states, ${result.seconds} s; ${result.violated}\n  ${(result.trail ?? []).join('\n  ')}`)
      expect(result.errors).toBeGreaterThan(0)
      // The replayed trail says who did what: the clients' steps and the broken property.
      expect(result.trail?.some((line) => /violated/.test(line))).toBe(true)
    })
  }
})
