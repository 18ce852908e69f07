import { adapterFor } from '../redis/index.js'
import type { RedisClient } from '../redis/client-types.js'
import { sameSlotKey } from '../util/keys.js'
import type { Exec } from '../lua/binding.js'
import { emit, events } from '../util/telemetry.js'
import { fenceClaim as fenceClaimScript, fencedSet as fencedSetScript } from '../lua/embedded.js'
import { InvalidArgumentError, KeyTypeError } from '../errors/errors.js'
import { NO_REPLY, replyWithin } from '../util/alarms.js'
import { closedClient, guardFailed, noReply } from '../errors/failures.js'
import { checkOptions, checkString, checkStringOrEmpty, checkTtl, describeValue, optionNames } from '../util/validate.js'

/** Options of {@link fencedSet} and {@link claimFence}. */
export interface FencedSetOptions {
  /** Expire the value (and its guard) after this many ms. Default: never. */
  px?: number
  /**
   * Longest wait for Redis' reply, in ms; then the call rejects with `RedisError`. Default:
   * `2_000`. The script takes microseconds of Redis time, so a healthy Redis answers far sooner,
   * and a holder with a lease of a few seconds still learns in time that Redis is unreachable.
   * After a timeout the script may still run later: its fence check still holds then.
   */
  timeout?: number
}

/** Default of `FencedSetOptions.timeout`, in ms. */
export const GUARD_TIMEOUT = 2_000

const checkFence = (fence: unknown): number => {
  if (typeof fence !== 'number' || !Number.isSafeInteger(fence) || fence < 0) {
    throw new InvalidArgumentError(`Expected \`fence\` to be a non-negative safe integer, got ${describeValue(fence)}`)
  }
  return fence
}

const GUARD_OPTIONS = optionNames<FencedSetOptions>('fencedSet/claimFence', { px: true, timeout: true })

const checkGuardOptions = (options: FencedSetOptions | undefined): { px: number; timeout: number } => {
  checkOptions(options, GUARD_OPTIONS)
  return {
    px: options?.px === undefined ? 0 : checkTtl(options.px, 'px'),
    timeout: options?.timeout === undefined ? GUARD_TIMEOUT : checkTtl(options.timeout, 'timeout'),
  }
}

/**
 * Runs one guard script, bounded by `timeout`: every failure leaves as a `FencelockError`
 * (`ClosedError` for a closed client, otherwise `RedisError` with the client's error in `cause`).
 */
async function runGuard(redis: RedisClient, what: string, call: (exec: Exec) => Promise<unknown>, timeout: number): Promise<unknown> {
  const adapter = adapterFor(redis)
  if (adapter.isClosed()) throw closedClient()
  let reply: unknown
  try {
    // A client that throws synchronously (closed meanwhile) is a failure like any other.
    reply = await replyWithin(
      Promise.resolve().then(() => call(adapter.evalScript)),
      timeout,
    )
  } catch (err) {
    throw guardFailed(what, err)
  }
  if (reply === NO_REPLY) throw noReply(what, timeout, adapter.clientError(), ' (the script may still run later, fenced as ever)')
  return reply
}

const an = (type: string): string => `${/^[aeiou]/i.test(type) ? 'an' : 'a'} ${type}`

/**
 * The guard scripts' reply: 1 accepted, 0 stale, or `[code, type]` for a key that holds what the
 * script must not overwrite (the script checked before writing: nothing was changed).
 */
function accepted(reply: unknown, operation: 'fencedSet' | 'claimFence', key: string, guard: string): boolean {
  if (!Array.isArray(reply)) return Number(reply) === 1
  const [code, type] = [Number(reply[0]), String(reply[1])]
  const done = operation === 'fencedSet' ? `fencedSet did not write ${describeValue(key)}` : `claimFence did not claim ${describeValue(key)}`
  if (code === -1) throw new KeyTypeError(key, type, `${done}: ${describeValue(key)} holds ${an(type)}, not a string value; nothing was changed`)
  const held = type === 'string' ? 'a string that is not a fence' : `${an(type)}, not a fence`
  throw new KeyTypeError(
    guard,
    type,
    `${done}: its guard key ${describeValue(guard)} holds ${held}; nothing was changed (the guard key is fencelock's own: is something else writing to it?)`,
  )
}

/**
 * Writes `value` to `key` only if `fence` is at least the highest fence accepted for `key` before,
 * atomically (one script). Resolves true when written, false when refused as stale. The highest
 * fence is kept in a guard key in the same cluster slot (`key` + `:fence`, hash-tagged). Rejects
 * with `RedisError` (the client's error in `cause`) if Redis fails or does not answer within
 * `options.timeout` (default 2 s), `ClosedError` if the client is closed, and `KeyTypeError` if
 * `key` holds another type than a string (a list, a hash, ...) or its guard key holds anything but
 * a fence: then nothing was changed.
 */
export async function fencedSet(redis: RedisClient, key: string, value: string, fence: number, options?: FencedSetOptions): Promise<boolean> {
  adapterFor(redis)
  checkString(key, 'key')
  checkStringOrEmpty(value, 'value')
  checkFence(fence)
  const { px, timeout } = checkGuardOptions(options)
  const guard = sameSlotKey(key, ':fence')
  const reply = await runGuard(redis, `fenced-set ${describeValue(key)}`, (exec) => fencedSetScript.run(exec, [key, guard], [value, fence, px]), timeout)
  const written = accepted(reply, 'fencedSet', key, guard)
  emit(events.fencedWrite, () => ({ key, fence, accepted: written, operation: 'fencedSet' }))
  return written
}

/**
 * Claims `key` for `fence` before reading it: raises the highest accepted fence of `key` to
 * `fence` without writing a value. Resolves false when a larger fence was accepted before (the
 * lease is stale: do not read-modify-write). Claim, read, then `fencedSet`: a holder that read
 * the key before a newer holder claimed it can no longer write it, so no update is lost. Fails
 * and is bounded as `fencedSet`.
 */
export async function claimFence(redis: RedisClient, key: string, fence: number, options?: FencedSetOptions): Promise<boolean> {
  adapterFor(redis)
  checkString(key, 'key')
  checkFence(fence)
  const { px, timeout } = checkGuardOptions(options)
  const guard = sameSlotKey(key, ':fence')
  const reply = await runGuard(redis, `claim the fence of ${describeValue(key)}`, (exec) => fenceClaimScript.run(exec, [guard], [fence, px]), timeout)
  const claimed = accepted(reply, 'claimFence', key, guard)
  emit(events.fencedWrite, () => ({ key, fence, accepted: claimed, operation: 'claimFence' }))
  return claimed
}
