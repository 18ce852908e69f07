import { spawn } from 'node:child_process'
import { constants } from 'node:os'
import type { Lease } from '../index.js'
import { Status } from './exit.js'

/** After SIGTERM, how long the command gets to stop before SIGKILL. */
const KILL_AFTER_MS = 10_000
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

export const signalExit = (signal: NodeJS.Signals): number => 128 + (constants.signals[signal] ?? 0)

type Outcome = { code: number | null; signal: NodeJS.Signals | null } | { error: NodeJS.ErrnoException }

/**
 * Runs `command` while `lease` is held and resolves with the exit status to use: the command's
 * own, or `Status.LOST` (75) if the lease was lost meanwhile (the command is then sent SIGTERM, and
 * SIGKILL if it outlives KILL_AFTER_MS). Signals sent to fencelock are passed on to the command,
 * so it ends first and the lock is released after it.
 */
export async function runHolding(lease: Lease, command: string[], log: (line: string) => void): Promise<number> {
  const [file, ...args] = command as [string, ...string[]]
  const child = spawn(file, args, {
    stdio: 'inherit',
    env: { ...process.env, FENCELOCK_RESOURCE: lease.resource, FENCELOCK_FENCE: String(lease.fence), FENCELOCK_TOKEN: lease.token },
  })
  const outcome = new Promise<Outcome>((resolve) => {
    child.once('error', (error) => resolve({ error }))
    child.once('exit', (code, signal) => resolve({ code, signal }))
  })

  let killer: NodeJS.Timeout | undefined
  let lost = false
  const onLost = () => {
    lost = true
    log(`${(lease.signal.reason as Error).message}; sending SIGTERM to the command`)
    child.kill('SIGTERM')
    killer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS)
  }
  const forward = (signal: NodeJS.Signals) => void child.kill(signal)
  lease.signal.addEventListener('abort', onLost, { once: true })
  if (lease.signal.aborted) onLost()
  for (const signal of FORWARDED) process.on(signal, forward)
  try {
    const result = await outcome
    if (lost) return Status.LOST
    if ('error' in result) {
      log(`cannot run ${JSON.stringify(file)}: ${result.error.message}`)
      return result.error.code === 'ENOENT' ? 127 : 126
    }
    return result.signal ? signalExit(result.signal) : (result.code ?? 1)
  } finally {
    clearTimeout(killer)
    lease.signal.removeEventListener('abort', onLost)
    for (const signal of FORWARDED) process.off(signal, forward)
  }
}
