import { adapterFor } from './redis/index.js'
import { sameSlotKey } from './keys.js'
import { scripts } from './scripts/index.js'
import { InvalidArgumentError } from './errors.js'
import { checkString, checkTtl, describeValue } from './validate.js'

export interface FencedSetOptions {
  /** Expire the value (and its guard) after this many ms. Default: never. */
  px?: number
}

const checkFence = (fence: unknown): number => {
  if (typeof fence !== 'number' || !Number.isSafeInteger(fence) || fence < 0) {
    throw new InvalidArgumentError(`Expected \`fence\` to be a non-negative safe integer, got ${describeValue(fence)}`)
  }
  return fence
}

/**
 * Writes `value` to `key` only if `fence` is at least the highest fence accepted for `key` before,
 * atomically (one script). Resolves true when written, false when refused as stale. The highest
 * fence is kept in a guard key in the same cluster slot (`key` + `:fence`, hash-tagged).
 */
export async function fencedSet(redis: unknown, key: string, value: string, fence: number, options: FencedSetOptions = {}): Promise<boolean> {
  const adapter = adapterFor(redis)
  checkString(key, 'key')
  checkString(value, 'value', true)
  checkFence(fence)
  const px = options.px === undefined ? 0 : checkTtl(options.px, 'px')
  const reply = await adapter.evalScript(scripts.fencedSet, [key, sameSlotKey(key, ':fence')], [value, fence, px])
  return Number(reply) === 1
}

/**
 * Claims `key` for `fence` before reading it: raises the highest accepted fence of `key` to
 * `fence` without writing a value. Resolves false when a larger fence was accepted before (the
 * lease is stale: do not read-modify-write). Claim, read, then `fencedSet`: a holder that read
 * the key before a newer holder claimed it can no longer write it, so no update is lost.
 */
export async function claimFence(redis: unknown, key: string, fence: number, options: FencedSetOptions = {}): Promise<boolean> {
  const adapter = adapterFor(redis)
  checkString(key, 'key')
  checkFence(fence)
  const px = options.px === undefined ? 0 : checkTtl(options.px, 'px')
  return Number(await adapter.evalScript(scripts.fenceClaim, [sameSlotKey(key, ':fence')], [fence, px])) === 1
}
