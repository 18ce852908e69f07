import { epochNow } from './settings.js'
import { LockLostError } from '../../errors/errors.js'
import type { Lock } from './lock.js'

/** How long a failed extension waits before it is tried again (while the lock is still valid). */
const RETRY_MS = 50

/** v5's signal: aborted when the lock can no longer be extended, `error` saying why. */
export type RedlockAbortSignal = AbortSignal & {
  /** Why the signal aborted: the error of the extension that could not be made, or the lock's loss. */
  error?: Error
}

/** What v5's `using` hands its routine beside the signal: the current lock and how often it was extended. */
export interface RedlockUsingContext {
  /** The lock as it is now: each extension replaces it with the extended one. */
  lock: Lock
  /** How many extensions succeeded so far. */
  extensions: number
}

/**
 * v5's `using` (node-redlock #169: theirs could hang forever): the lock is extended by `duration`
 * whenever `threshold` ms of it are left; an extension that fails is tried again while the lock is
 * still valid, and when it cannot be (or the lease's own signal says it is lost) the signal aborts
 * with `signal.error`. The release runs once, whatever `routine` did, and is bounded by the lease.
 */
export async function usingLock<T>(
  acquiring: Promise<Lock>,
  duration: number,
  threshold: number,
  routine: (signal: RedlockAbortSignal, context: RedlockUsingContext) => Promise<T>,
): Promise<T> {
  const controller = new AbortController()
  const signal = controller.signal as RedlockAbortSignal
  const context: RedlockUsingContext = { lock: await acquiring, extensions: 0 }
  let timer: NodeJS.Timeout | undefined
  let extension: Promise<void> | undefined
  let done = false
  const abort = (error: Error) => {
    if (signal.aborted) return
    signal.error = error
    controller.abort(error)
  }
  const lost = () =>
    abort(context.lock.signal.reason instanceof Error ? context.lock.signal.reason : new LockLostError(context.lock.resources.join(','), 'expired'))
  context.lock.signal.addEventListener('abort', lost, { once: true })
  const queue = () => {
    if (done) return
    timer = setTimeout(() => void (extension = extend()), Math.max(0, context.lock.expiration - epochNow() - threshold))
  }
  const extend = async (): Promise<void> => {
    timer = undefined
    try {
      context.lock = await context.lock.extend(duration)
      context.extensions += 1
      queue()
    } catch (error) {
      if (!done && !context.lock.signal.aborted && context.lock.expiration - epochNow() > RETRY_MS) {
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS))
        return extend()
      }
      abort(error instanceof Error ? error : new Error(String(error)))
    }
  }
  queue()
  try {
    return await routine(signal, context)
  } finally {
    done = true
    if (timer) clearTimeout(timer)
    await extension?.catch(() => {})
    context.lock.signal.removeEventListener('abort', lost)
    await context.lock.release().catch(() => {})
  }
}
