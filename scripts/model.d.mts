// Types for scripts/model.mjs (used by test/model.test.ts).
export interface ModelRun {
  id: string
  file: string
  defines: string[]
  expect: 'pass' | 'fail'
  rule?: string
  full?: string[]
}

export interface ModelResult {
  id: string
  defines: string[]
  expect: 'pass' | 'fail'
  rule: string | null
  states: number | null
  depth: number | null
  panSeconds: number | null
  seconds: number
  errors: number | null
  violated: string | null
  /** The counterexample replayed with `spin -t`: the model's printf lines, in order. */
  trail: string[] | null
  ok: boolean
}

export const runs: ModelRun[]
export function missingTools(): string
export function runOne(run: ModelRun, options?: { full?: boolean; timeoutMs?: number }): ModelResult
