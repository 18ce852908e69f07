// `fencelock release <resource> --force`: removes a holder whose token the operator does not have,
// through the library's ordinary compare-and-delete release of the token inspect read, so the next
// waiter is woken and a holder that changed in between is left alone.
import { createInterface } from 'node:readline/promises'
import type { Locks } from '../index.js'
import { formatTtl } from './inspect.js'

export interface ForceOptions {
  /** Remove without asking (--yes). */
  readonly yes: boolean
  readonly log: (line: string) => void
  readonly print: (line: string) => void
}

/** Asks `question` on the terminal (stdin/stderr); true for y or yes. */
async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true })
  try {
    const answer = await rl.question(question)
    return /^y(es)?$/i.test(answer.trim())
  } finally {
    rl.close()
  }
}

/**
 * Reads the holder of `resource` and releases it with its token. Resolves with the exit code:
 * 0 removed; 1 not held, not confirmed, or no longer held by that token when the release ran.
 */
export async function forceRelease(locks: Locks, resource: string, options: ForceOptions): Promise<number> {
  const info = await locks.inspect(resource)
  if (!info.held || info.token === null) {
    options.log(`lock "${resource}" is not held (last fence ${info.fence ?? 'none'}, ${info.waiters} waiting); nothing to remove`)
    return 1
  }
  const holder = `token ${info.token} (fence ${info.fence ?? 'none'}, ${info.ttl ?? 0} ms left)`
  if (!options.yes && !(await confirm(`Remove the lock held by ${holder}? [y/N] `))) {
    options.log(`not removed: lock "${resource}" is still held by token ${info.token}`)
    return 1
  }
  if (!(await locks.release(resource, info.token))) {
    options.log(`not removed: lock "${resource}" is no longer held by token ${info.token} (it expired, was released, or another holder took it since it was read); run the command again to see the current holder`)
    return 1
  }
  options.print(`removed the holder of "${resource}": token ${info.token}, fence ${info.fence ?? 'none'}, ${formatTtl(info.ttl ?? 0)} (${info.ttl ?? 0} ms) left`)
  return 0
}
