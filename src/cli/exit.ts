import { FencelockError, InvalidArgumentError, LockTimeoutError } from '../index.js'

/**
 * The CLI's exit statuses, one per outcome a script may branch on, sysexits-style as flock(1) and
 * consul lock do: contention (1) is never confused with Redis being away (69) or refusing us (77).
 * `run` otherwise exits with its command's own status, so those may also come from the command.
 */
export const Status = {
  OK: 0,
  /** The lock is held by someone else (not acquired within --wait), or the token does not hold it. */
  NO: 1,
  /** Bad usage or set-up: a flag, a value, a client library that is not installed. */
  USAGE: 2,
  /** EX_UNAVAILABLE: Redis could not be reached, did not answer in time, or failed. */
  UNAVAILABLE: 69,
  /** EX_SOFTWARE: an error fencelock did not expect (a bug: please report it). */
  SOFTWARE: 70,
  /** EX_TEMPFAIL: `run` lost the lease while its command ran. */
  LOST: 75,
  /** EX_NOPERM: Redis refused the credentials or a command (WRONGPASS, NOAUTH, NOPERM). */
  NOPERM: 77,
} as const

/** Ends the CLI with `code` after printing `message` to stderr. */
export class Exit extends Error {
  override readonly name = 'Exit'
  constructor(
    readonly code: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

export const log = (line: string): void => void process.stderr.write(`fencelock: ${line}\n`)
export const print = (line: string): void => void process.stdout.write(`${line}\n`)

/** Waits for `promise` at most `ms`: a hung Redis must not keep the CLI from exiting. */
export const within = (ms: number, promise: Promise<unknown>): Promise<unknown> =>
  Promise.race([promise.catch(() => {}), new Promise((resolve) => setTimeout(resolve, ms).unref())])

/**
 * `promise`, or a rejection with `timedOut()` once `ms` pass. The client keeps the request, so a
 * late failure of it is swallowed here; closing the client ends it.
 */
export function answerWithin<T>(ms: number, promise: Promise<T>, timedOut: () => Error): Promise<T> {
  promise.catch(() => {})
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(timedOut()), ms)))
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer))
}

// Redis' refusals of who we are or of what the user may run: retrying cannot cure them.
const REFUSED = /^(WRONGPASS|NOAUTH|NOPERM)\b|invalid username-password/i

/** Did Redis refuse the credentials or a command, anywhere in `err`'s chain of causes? */
export function isPermissionError(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) if (REFUSED.test(e.message)) return true
  return false
}

/** The exit status of an error that ended a command. */
export function statusOf(err: unknown): number {
  if (err instanceof Exit) return err.code
  if (err instanceof InvalidArgumentError) return Status.USAGE
  if (isPermissionError(err)) return Status.NOPERM
  if (err instanceof LockTimeoutError) return Status.NO
  // RedisError (failed, or no reply in time), QuorumError (no majority), a lost lease, a closed client.
  if (err instanceof FencelockError) return Status.UNAVAILABLE
  return Status.SOFTWARE
}
