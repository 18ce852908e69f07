import { adapterFor, closedClient } from './redis/index.js'
import { isPermanentReplyError } from './redis/adapter.js'
import type { RedisClient } from './redis/client-types.js'
import { sameSlotKey } from './keys.js'
import { bind, type Exec } from './scripts/binding.js'
import { emit, events } from './telemetry.js'
import { scripts } from './scripts/index.js'
import { FencelockError, InvalidArgumentError, RedisError } from './errors.js'
import { NO_REPLY, withinLimit } from './limit.js'
import { checkOptions, checkString, checkTtl, describeValue, optionNames } from './validate.js'

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

const fencedSetScript = bind(scripts.fencedSet, ['key', 'guard'], ['value', 'fence', 'px'])
const fenceClaimScript = bind(scripts.fenceClaim, ['guard'], ['fence', 'px'])

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

/** Without these the guards cannot run at all: say so, not only "no permissions". */
const permissionHint = (message: string): string =>
  /^NOPERM/.test(message) && /'eval(sha)?'/i.test(message) ? ' (the Redis user needs the EVALSHA and EVAL commands: ACL SETUSER <user> +evalsha +eval)' : ''

/**
 * Runs one guard script, bounded by `timeout`: every failure leaves as a `FencelockError`
 * (`ClosedError` for a closed client, otherwise `RedisError` with the client's error in `cause`).
 */
async function runGuard(redis: RedisClient, what: string, call: (exec: Exec) => Promise<unknown>, timeout: number): Promise<boolean> {
  const adapter = adapterFor(redis)
  if (adapter.isClosed()) throw closedClient()
  let reply: unknown
  try {
    // A client that throws synchronously (closed meanwhile) is a failure like any other.
    reply = await withinLimit(Promise.resolve().then(() => call(adapter.evalScript)), timeout)
  } catch (err) {
    if (err instanceof FencelockError) throw err
    // Closed while the call was on its way (ioredis: "Connection is closed."): say that, typed.
    if (adapter.isClosed()) throw closedClient()
    const message = err instanceof Error ? err.message : String(err)
    const verb = isPermanentReplyError(err) ? 'Redis refused to' : 'Could not'
    throw new RedisError(`${verb} ${what}: ${message}${permissionHint(message)}`, { cause: err })
  }
  if (reply === NO_REPLY) throw new RedisError(`No reply from Redis within ${timeout} ms: could not ${what} (the script may still run later, fenced as ever)`)
  return Number(reply) === 1
}

/**
 * Writes `value` to `key` only if `fence` is at least the highest fence accepted for `key` before,
 * atomically (one script). Resolves true when written, false when refused as stale. The highest
 * fence is kept in a guard key in the same cluster slot (`key` + `:fence`, hash-tagged). Rejects
 * with `RedisError` (the client's error in `cause`) if Redis fails or does not answer within
 * `options.timeout` (default 2 s), `ClosedError` if the client is closed.
 */
export async function fencedSet(redis: RedisClient, key: string, value: string, fence: number, options?: FencedSetOptions): Promise<boolean> {
  adapterFor(redis)
  checkString(key, 'key')
  checkString(value, 'value', true)
  checkFence(fence)
  const { px, timeout } = checkGuardOptions(options)
  const accepted = await runGuard(redis, `fenced-set ${describeValue(key)}`, (exec) => fencedSetScript.run(exec, [key, sameSlotKey(key, ':fence')], [value, fence, px]), timeout)
  emit(events.fencedWrite, () => ({ key, fence, accepted, operation: 'fencedSet' }))
  return accepted
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
  const accepted = await runGuard(redis, `claim the fence of ${describeValue(key)}`, (exec) => fenceClaimScript.run(exec, [sameSlotKey(key, ':fence')], [fence, px]), timeout)
  emit(events.fencedWrite, () => ({ key, fence, accepted, operation: 'claimFence' }))
  return accepted
}
