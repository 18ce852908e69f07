import { InvalidArgumentError } from '../errors/errors.js'
import { checkOptions, describeValue, optionNames } from './validate.js'

/** Options of {@link parseDuration}. */
export interface ParseDurationOptions {
  /** How the value is named in the error message. Default: `'duration'`. */
  name?: string
  /** Accept `Infinity` (also `infinity`, `inf`) and return `Infinity`. Default: false. */
  infinity?: boolean
  /** Refuse `0`. Default: false. */
  positive?: boolean
}

const DURATION_OPTIONS = optionNames<ParseDurationOptions>('parseDuration', { name: true, infinity: true, positive: true })

const UNIT_MS = { d: 86_400_000n, h: 3_600_000n, m: 60_000n, s: 1_000n, ms: 1n } as const
type Unit = keyof typeof UNIT_MS
const ORDER: readonly Unit[] = ['d', 'h', 'm', 's', 'ms']
const PART = /(\d+)(?:\.(\d+))?(ms|s|m|h|d)/y
const EXAMPLES = 'such as 250ms, 1.5s, 30s, 1m30s, 5m, 1h or 2d'

/**
 * Reads a duration as people write it and returns whole milliseconds: `250ms`, `1.5s`, `30s`,
 * `1m30s`, `2h`, `2d` (units `ms`, `s`, `m`, `h`, `d`, largest first, each at most once; decimals
 * allowed). A number without a unit is refused (is `30` seconds or milliseconds?), except `0`.
 * Throws `InvalidArgumentError` naming the value and what is wrong with it. The library's options
 * take numbers of milliseconds: `ttl: parseDuration('30s')`; the CLI reads every time flag with it.
 */
export function parseDuration(text: string, options: ParseDurationOptions = {}): number {
  checkOptions(options, DURATION_OPTIONS)
  const { name = 'duration', infinity = false, positive = false } = options
  const fail = (problem: string): never => {
    throw new InvalidArgumentError(`Invalid ${name} ${describeValue(text)}: ${problem}`)
  }
  if (typeof text !== 'string') return fail(`expected a string ${EXAMPLES}`)
  if (text === '') return fail(`expected a duration ${EXAMPLES}`)
  if (/^inf(inity)?$/i.test(text)) return infinity ? Infinity : fail('expected a finite duration')
  if (/^\d+(\.\d+)?$/.test(text) && Number(text) !== 0) {
    return fail(`a number needs a unit: ${text}s for seconds, ${text}ms for milliseconds (also m, h, d, as in 1m30s)`)
  }
  if (/^0+(\.0+)?$/.test(text)) return positive ? fail(`expected a duration longer than 0, ${EXAMPLES}`) : 0
  if (text.startsWith('-')) return fail(`a duration cannot be negative`)
  if (/[A-Z]/.test(text) && /^(\d+(\.\d+)?[a-z]+)+$/i.test(text)) return fail(`units are lower case: ms, s, m, h, d`)

  let total = 0n
  let at = 0
  let previous = -1
  PART.lastIndex = 0
  while (at < text.length) {
    PART.lastIndex = at
    const part = PART.exec(text)
    if (!part) {
      const rest = text.slice(at)
      return fail(/^\d+(\.\d+)?$/.test(rest) ? `${rest} has no unit (ms, s, m, h or d)` : `expected a duration ${EXAMPLES}${infinity ? ', or Infinity' : ''}`)
    }
    const [, whole, fraction = '', unit] = part as unknown as [string, string, string | undefined, Unit]
    const rank = ORDER.indexOf(unit)
    if (rank <= previous) return fail(`units go from largest to smallest, each at most once (as in 1h30m or 1m30s)`)
    previous = rank
    // Exact decimal arithmetic: 1.1s is 1100 ms, not 1100.0000000000002.
    const scale = 10n ** BigInt(fraction.length)
    const scaled = (BigInt(whole) * scale + BigInt(fraction || '0')) * UNIT_MS[unit]
    if (scaled % scale !== 0n) return fail(`${part[0]} is not a whole number of milliseconds`)
    total += scaled / scale
    at = PART.lastIndex
  }
  if (total > BigInt(Number.MAX_SAFE_INTEGER)) return fail('too long')
  if (positive && total === 0n) return fail(`expected a duration longer than 0, ${EXAMPLES}`)
  return Number(total)
}
