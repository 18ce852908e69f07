// The `fencelock` command run as a real process (src/cli/main.ts: its bundle from the test run's
// global setup, or through tsx), with pipes.
// A run that outlives `killAfter` is killed and reported with code null, so a hang fails the test
// that saw it instead of timing out the whole file.
import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { nodeArgsFor } from './prebuilt.js'

/** The repository: the CLI runs with it as its working directory. */
export const root = fileURLToPath(new URL('..', import.meta.url))
export const cliPath = path.join(root, 'src', 'cli', 'main.ts')

export interface CliResult {
  /** Exit status; null when killed (by `killAfter`, or a signal). */
  code: number | null
  stdout: string
  stderr: string
  /** ms from spawn to exit, by the monotonic clock. */
  elapsed: number
}

export interface CliOptions {
  /** Variables added to a copy of the test's environment (REDIS_URL, REDIS_PASSWORD and colour ones are dropped unless given). */
  env?: NodeJS.ProcessEnv
  /** Node flags before the program (e.g. a module hook). */
  nodeArgs?: string[]
  /** SIGKILL after this many ms. Default: 60_000. */
  killAfter?: number
  /** Sees stdout and stderr so far as they come, to act while the command runs. */
  onOutput?: (output: { stdout: string; stderr: string }, child: ChildProcess) => void
}

/** A copy of the test's environment with `env` added; REDIS_URL, REDIS_PASSWORD and the colour variables only if `env` gives them. */
export function cliEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const merged: NodeJS.ProcessEnv = { ...process.env, ...env }
  for (const name of ['REDIS_URL', 'REDIS_PASSWORD', 'NO_COLOR', 'FORCE_COLOR', 'CLICOLOR_FORCE']) if (!(name in env)) delete merged[name]
  return merged
}

export function cli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const env = cliEnv(options.env)
  const started = performance.now()
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...nodeArgsFor(cliPath), ...args], { cwd: root, env })
  const killer = setTimeout(() => child.kill('SIGKILL'), options.killAfter ?? 60_000)
  const output = { stdout: '', stderr: '' }
  child.stdout.on('data', (chunk: Buffer) => {
    output.stdout += chunk.toString()
    options.onOutput?.(output, child)
  })
  child.stderr.on('data', (chunk: Buffer) => {
    output.stderr += chunk.toString()
    options.onOutput?.(output, child)
  })
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(killer)
      resolve({ code, ...output, elapsed: performance.now() - started })
    }),
  )
}

/** What a run ended with, without its timing: for tests that compare it whole. */
export type CliOutcome = Omit<CliResult, 'elapsed'>

/** `cli`, resolving to the outcome only (code, stdout, stderr). */
export async function cliOutcome(args: string[], options: CliOptions = {}): Promise<CliOutcome> {
  const { elapsed: _, ...outcome } = await cli(args, options)
  return outcome
}

/** `run(item)` for every item, at most `limit` at a time (each CLI process costs a core for a second). */
export async function inBatches<T, R>(items: readonly T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      results[i] = await run(items[i]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}
