// Work with no clock in it (compilers, type checks, the model checker, API docs) runs beside the
// suite's timed tests on the same two cores. At the lowest CPU priority it takes what the timed
// tests leave, instead of stalling their event loops for seconds (the failures of December 2026
// in CI were timed tests beside such work). Its own bounds are hang guards, not measurements.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

/** `command args` at the lowest CPU priority (its children inherit it), for `execFile` or `spawn`. */
export function lowPriority(command: string, args: readonly string[]): [string, string[]] {
  return ['nice', ['-n', '19', command, ...args]]
}

/** The environment for it: Go-built tools (TypeScript 7's compiler) use one thread, not one per core. */
export const lowPriorityEnv = (env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv => ({ ...env, GOMAXPROCS: '1' })

/** The project's TypeScript 5 compiler, by its path (`npx tsc` names whichever `tsc` bin npm linked last). */
export const TSC = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url))

/** `tsc args` in `cwd` at the lowest priority: '' if it passed, else its output, so a report shows the type errors themselves. */
export async function typeErrors(args: readonly string[], cwd: string, tsc = TSC): Promise<string> {
  try {
    await promisify(execFile)(...lowPriority(process.execPath, [tsc, ...args]), { cwd, env: lowPriorityEnv(), maxBuffer: 16 << 20 })
    return ''
  } catch (err) {
    const { stdout, stderr, message } = err as { stdout?: string; stderr?: string; message: string }
    return `${stdout ?? ''}${stderr ?? ''}` || message
  }
}
