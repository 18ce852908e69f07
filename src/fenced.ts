import { adapterFor } from './redis/index.js'
import { sameSlotKey } from './keys.js'
import { scripts } from './scripts/index.js'
import { InvalidArgumentError } from './errors.js'
import { checkString, checkTtl, describeValue } from './validate.js'

export interface FencedSetOptions {
  /** Expire the value (and its guard) after this many ms. Default: never. */
  px?: number
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
  if (typeof fence !== 'number' || !Number.isSafeInteger(fence) || fence < 0) {
    throw new InvalidArgumentError(`Expected \`fence\` to be a non-negative safe integer, got ${describeValue(fence)}`)
  }
  const px = options.px === undefined ? 0 : checkTtl(options.px, 'px')
  const reply = await adapter.evalScript(scripts.fencedSet, [key, sameSlotKey(key, ':fence')], [value, fence, px])
  return Number(reply) === 1
}
