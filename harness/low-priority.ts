// Work with no clock in it (compilers, type checks, the model checker, API docs) runs beside the
// suite's timed tests on the same two cores. At the lowest CPU priority it takes what the timed
// tests leave, instead of stalling their event loops for seconds (the failures of December 2026
// in CI were timed tests beside such work). Its own bounds are hang guards, not measurements.

/** `command args` at the lowest CPU priority (its children inherit it), for `execFile` or `spawn`. */
export function lowPriority(command: string, args: readonly string[]): [string, string[]] {
  return ['nice', ['-n', '19', command, ...args]]
}

/** The environment for it: Go-built tools (TypeScript 7's compiler) use one thread, not one per core. */
export const lowPriorityEnv = (env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv => ({ ...env, GOMAXPROCS: '1' })
