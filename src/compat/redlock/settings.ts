import { InvalidArgumentError } from '../../errors/errors.js'
import { unknownOptionMessage } from '../../util/unknown-option.js'
import { MAX_TTL, describeValue } from '../../util/validate.js'

/** node-redlock's settings (v4's options, v5's and the fork's settings: one set). */
export interface Settings {
  /** Clock drift allowed, as a share of the ttl. Default: 0.01. */
  readonly driftFactor?: number
  /** Retries after the first attempt; -1: without end. Default: 10. */
  readonly retryCount?: number
  /** ms between attempts. Default: 200. */
  readonly retryDelay?: number
  /** Random ms added to or taken from each delay. Default: 100. */
  readonly retryJitter?: number
  /** v5 `using`: extend when this many ms of the lock are left. Default: 500. */
  readonly automaticExtensionThreshold?: number
  /** @sesamecare-oss/redlock: the database every script selects (0 to 15). Default: the client's own. */
  readonly db?: number
}

export interface Checked {
  readonly driftFactor: number
  readonly retryCount: number
  readonly retryDelay: number
  readonly retryJitter: number
  readonly automaticExtensionThreshold: number
  readonly db: number | undefined
}

export const DEFAULTS: Checked = { driftFactor: 0.01, retryCount: 10, retryDelay: 200, retryJitter: 100, automaticExtensionThreshold: 500, db: undefined }

/** Every setting node-redlock reads (its custom scripts are refused by the constructor, with the reason). */
const NAMES: readonly string[] = [
  'driftFactor',
  'retryCount',
  'retryDelay',
  'retryJitter',
  'automaticExtensionThreshold',
  'db',
  'lockScript',
  'unlockScript',
  'extendScript',
] satisfies readonly (keyof Settings | 'lockScript' | 'unlockScript' | 'extendScript')[]

/** A setting as node-redlock reads it (anything but a number is the default), refusing numbers that mean nothing. */
function numberOf(value: unknown, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number') return fallback
  if (!(value >= min && value <= max)) throw new InvalidArgumentError(`Expected \`${name}\` to be a number from ${min} to ${max}, got ${describeValue(value)}`)
  return value
}

/**
 * The settings over `base`: node-redlock's defaults for what is left out or not a number (as it
 * does), an `InvalidArgumentError` for a number it could only misread (negative, NaN).
 */
export function checkSettings(settings: unknown, base: Checked = DEFAULTS): Checked {
  if (settings === undefined || settings === null) return base
  if (typeof settings !== 'object') throw new InvalidArgumentError(`Expected the settings to be an object, got ${describeValue(settings)}`)
  // node-redlock ignores a misspelt `retrycount` and retries 10 times; say it instead.
  const unknown = unknownOptionMessage(settings, NAMES, 'Redlock')
  if (unknown !== undefined) throw new InvalidArgumentError(unknown)
  const s = settings as Record<string, unknown>
  const retryCount = numberOf(s.retryCount, 'retryCount', base.retryCount, -1)
  if (!Number.isInteger(retryCount))
    throw new InvalidArgumentError(`Expected \`retryCount\` to be an integer (-1: without end), got ${describeValue(retryCount)}`)
  const db = s.db === undefined ? base.db : numberOf(s.db, 'db', 0, 0, 15)
  if (db !== undefined && !Number.isInteger(db)) throw new InvalidArgumentError(`Expected \`db\` to be an integer from 0 to 15, got ${describeValue(db)}`)
  return {
    driftFactor: numberOf(s.driftFactor, 'driftFactor', base.driftFactor, 0, 0.5),
    retryCount,
    retryDelay: numberOf(s.retryDelay, 'retryDelay', base.retryDelay, 0),
    retryJitter: numberOf(s.retryJitter, 'retryJitter', base.retryJitter, 0),
    automaticExtensionThreshold: numberOf(s.automaticExtensionThreshold, 'automaticExtensionThreshold', base.automaticExtensionThreshold, 0),
    db,
  }
}

/**
 * v4's `ttl` (v5 refuses a non-integer duration with its own message): a number, checked further
 * as any lease's. A string is refused here, where the hint can leave out parseDuration, which this
 * entry does not export.
 */
export function checkTtlV4(ttl: unknown): number {
  if (typeof ttl === 'number') return ttl
  const hint = typeof ttl === 'string' && /^\d+$/.test(ttl) ? `: write the number ${ttl}, not a string` : ''
  throw new InvalidArgumentError(`Expected \`ttl\` to be an integer number of milliseconds, got ${describeValue(ttl)}${hint}`)
}

/**
 * How long an acquisition may wait: the time node-redlock's retries would span at most (each delay
 * with its full jitter), so `retryCount` and `retryDelay` keep their meaning as a budget. Within
 * it the drop-in does not poll: it is woken when a drop-in holder releases.
 */
export const waitBudget = (s: Checked): number => (s.retryCount === -1 ? Infinity : Math.min(MAX_TTL, s.retryCount * (s.retryDelay + s.retryJitter)))

/**
 * node-redlock's `lock.expiration` is milliseconds since the epoch. Counted here from the process'
 * time origin on the monotonic clock, so that a wall clock stepped while a lock is held moves
 * neither an expiration nor the checks made against it (DESIGN.md: time that decides safety is
 * never the wall clock).
 */
export const epochNow = (): number => performance.timeOrigin + performance.now()
