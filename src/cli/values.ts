// Readers of the command line's values. Each refuses a bad value with a UsageError that names the
// flag and the value, before anything connects to Redis.
import { InvalidArgumentError, parseDuration } from '../index.js'

/** Bad input on the command line: the CLI prints the message and exits with code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}

// The library's bounds of a lease ttl (src/util/validate.ts), repeated here so that the CLI reaches the
// library only through its public entry point; the library checks them again.
const MIN_TTL = 100
const MAX_TTL = 24 * 86_400_000

export const DEFAULT_REDIS = 'redis://127.0.0.1:6379'

/**
 * A time flag, read by the library's own parser (`30s`, `1m30s`; a bare number other than 0 is
 * refused), within the range the library accepts, so a mistake is told in the flag's terms.
 * `ttl`: a lease ttl (at least 100ms, finite); otherwise a wait (0 and Infinity allowed);
 * `positive`: a period such as --interval (finite, above 0).
 */
export function parseTime(value: string, option: string, kind: 'ttl' | 'wait' | 'period'): number {
  let ms: number
  try {
    ms = parseDuration(value, { name: `${option} value`, infinity: kind === 'wait', positive: kind !== 'wait' })
  } catch (err) {
    if (err instanceof InvalidArgumentError) throw new UsageError(err.message)
    throw err
  }
  const bad = (expected: string) => new UsageError(`Invalid ${option} value ${JSON.stringify(value)}: expected ${expected}`)
  if (kind !== 'wait' && ms < MIN_TTL) throw bad(`at least ${MIN_TTL}ms`)
  if (ms !== Infinity && ms > MAX_TTL) throw bad(`at most ${MAX_TTL / 86_400_000}d${kind === 'wait' ? ', or Infinity' : ''}`)
  return ms
}

/** A redis:// or rediss:// URL with a host; `source` names where it came from (--redis, REDIS_URL). */
export function parseRedisUrl(value: string, source: string): string {
  let url: URL | undefined
  try {
    url = new URL(value)
  } catch {}
  if (!url || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '') {
    throw new UsageError(`Invalid ${source} value ${JSON.stringify(value)}: expected a URL such as ${DEFAULT_REDIS} (redis:// or rediss://)`)
  }
  return value
}

/** A whole number from `min` to `max`, such as the permits of --semaphore. */
export function parseCount(value: string, option: string, min: number, max: number): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`Invalid ${option} value ${JSON.stringify(value)}: expected a whole number from ${min} to ${max}`)
  }
  return n
}

export const CLIENTS = ['ioredis', 'node-redis'] as const
export type ClientName = (typeof CLIENTS)[number]

export function parseClient(value: string): ClientName {
  if (!(CLIENTS as readonly string[]).includes(value)) throw new UsageError(`Invalid --client value ${JSON.stringify(value)}: expected ioredis or node-redis`)
  return value as ClientName
}

/** Never a password in a message. */
export function redact(url: string): string {
  const parsed = new URL(url)
  if (parsed.password) parsed.password = '***'
  return parsed.toString()
}
