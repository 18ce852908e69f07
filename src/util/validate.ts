import { describeValue as show } from '../errors/describe-value.js'
import { InvalidArgumentError } from '../errors/errors.js'
import { unknownOptionMessage } from './unknown-option.js'

/** Longest TTL accepted anywhere: 24 days, below setTimeout's 2^31-1 ms limit. */
export const MAX_TTL = 2_073_600_000
/** Resource names are keys: keep them well inside Redis' and humans' comfort. */
export const MAX_RESOURCE_LENGTH = 1024
/**
 * Shortest lease ttl accepted unless `allowShortTtl` is set: below it a lease spends its life
 * renewing (withLock extends every ttl/3), and a value this small is nearly always seconds
 * written where milliseconds are meant (`ttl: 30`).
 */
export const MIN_TTL = 100

export const MAX_TOKEN_LENGTH = 256

/**
 * A lone surrogate (half of a UTF-16 pair) cannot be encoded as UTF-8: the clients send U+FFFD in
 * its place, so `'a\uD800'`, `'a\uDC00'` and `'a\uFFFD'` would name one key. Refuse it instead.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

function checkWellFormed(value: string, name: string): string {
  // isWellFormed (ES2024: Node 20, Bun, Deno) is a plain scan; the regex runs only to name the index.
  if ((value as { isWellFormed?: () => boolean }).isWellFormed?.() === true) return value
  const lone = LONE_SURROGATE.exec(value)
  if (lone) {
    throw new InvalidArgumentError(
      `Expected \`${name}\` to be well-formed UTF-16, got ${show(value)} with a lone surrogate at index ${lone.index}: Redis would store it as U+FFFD, the same key as another name`,
    )
  }
  return value
}

/** What parseDuration reads (duration.ts says it exactly; this only decides which hint to give). */
const DURATION_TEXT = /^(\d+(\.\d+)?(ms|s|m|h|d))+$/

/**
 * A string where ms are expected gets a hint that works when followed: digits are a number of ms
 * already (parseDuration refuses a number without a unit), a duration string goes to parseDuration.
 */
function durationHint(value: unknown): string {
  if (typeof value !== 'string') return ''
  if (/^\d+$/.test(value)) return `: write the number ${value} (a number is milliseconds), not a string`
  if (DURATION_TEXT.test(value)) return `; for a duration string use parseDuration(${show(value)}) from 'fencelock'`
  return ''
}

export function checkTtl(value: unknown, name = 'ttl', max = MAX_TTL): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0 || value > max) {
    throw new InvalidArgumentError(
      `Expected \`${name}\` to be a positive integer number of milliseconds no larger than ${max}, got ${show(value)}${durationHint(value)}`,
    )
  }
  return value
}

/**
 * A lease ttl: as `checkTtl`, and at least `MIN_TTL` ms unless `allowShort` (createLocks'
 * `allowShortTtl`). `ttl: 30` meant as seconds would otherwise give a 30 ms lease, silently.
 */
export function checkLeaseTtl(value: unknown, name = 'ttl', max = MAX_TTL, allowShort = false): number {
  const ms = checkTtl(value, name, max)
  if (ms < MIN_TTL && !allowShort) {
    throw new InvalidArgumentError(
      `Expected \`${name}\` to be at least ${MIN_TTL} ms, got ${ms}: durations are in milliseconds (for ${ms} seconds write ${ms * 1_000}, or parseDuration('${ms}s')); for a lease this short on purpose, pass allowShortTtl: true to createLocks`,
    )
  }
  return ms
}

/** `maxHold`: a positive integer number of ms, or Infinity (off). */
export function checkMaxHold(value: unknown): number {
  return value === Infinity ? value : checkTtl(value, 'maxHold')
}

export function checkWait(value: unknown, name = 'wait'): number {
  if (value === Infinity) return value
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TTL) {
    throw new InvalidArgumentError(
      `Expected \`${name}\` to be a non-negative integer number of milliseconds (at most ${MAX_TTL}) or Infinity, got ${show(value)}${durationHint(value)}`,
    )
  }
  return value
}

/** `acquire(['a', 'b'])` is how node-redlock takes several locks; here that is acquireAll. */
const severalHint = (value: unknown, name: string): string =>
  Array.isArray(value) && name === 'resource'
    ? ': to lock several resources at once (all or nothing), use acquireAll(resources) or withLocks(resources, fn)'
    : ''

export function checkResource(value: unknown, name = 'resource'): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_RESOURCE_LENGTH) {
    throw new InvalidArgumentError(
      `Expected \`${name}\` to be a non-empty string of at most ${MAX_RESOURCE_LENGTH} characters, got ${show(value)}${severalHint(value, name)}`,
    )
  }
  return checkWellFormed(value, name)
}

/** A lease token given back by the caller (`lease.token`, or the CLI's output). */
export function checkToken(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_TOKEN_LENGTH) {
    throw new InvalidArgumentError(
      `Expected \`token\` to be a lease's token (a non-empty string of at most ${MAX_TOKEN_LENGTH} characters), got ${show(value)}`,
    )
  }
  return checkWellFormed(value, 'token')
}

export function checkSignal(value: unknown): AbortSignal | undefined {
  if (value === undefined) return undefined
  if (!(value instanceof AbortSignal)) {
    throw new InvalidArgumentError(`Expected \`signal\` to be an AbortSignal, got ${show(value)}`)
  }
  return value
}

export function checkNumber(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < min || value > max) {
    throw new InvalidArgumentError(`Expected \`${name}\` to be a number from ${min} to ${max}, got ${show(value)}`)
  }
  return value
}

/** A non-empty string sent to Redis (a key): well-formed, so it arrives as written. */
export function checkString(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new InvalidArgumentError(`Expected \`${name}\` to be a non-empty string, got ${show(value)}`)
  return checkWellFormed(value, name)
}

/** A string sent to Redis that may be empty (a prefix, a value): well-formed, so it arrives as written. */
export function checkStringOrEmpty(value: unknown, name: string): string {
  if (typeof value !== 'string') throw new InvalidArgumentError(`Expected \`${name}\` to be a string, got ${show(value)}`)
  return checkWellFormed(value, name)
}

/** The option names of one options argument, and what to say of a name that is a known mistake there. */
export interface OptionNames {
  /** What the options belong to, for the message: `acquire`, `createLocks`, ... */
  readonly of: string
  readonly names: readonly string[]
  readonly hints?: Readonly<Record<string, string>>
}

/**
 * The names of the options type `T`, listed once: tsc refuses a list that misses one of its keys
 * or names one it lacks, so a new option cannot be forgotten here and then refused at run time.
 */
export const optionNames = <T extends object>(of: string, names: Record<keyof T, true>, hints?: Readonly<Record<string, string>>): OptionNames => ({
  of,
  names: Object.keys(names),
  ...(hints && { hints }),
})

/**
 * An options argument: absent, or a plain object (a null or a number would otherwise fail as a
 * TypeError) whose every key is one of `known` (a misspelt `tll` would otherwise be ignored, and
 * the default used without a word).
 */
export function checkOptions(value: unknown, known?: OptionNames, name = 'options'): void {
  if (value === undefined) return
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(`Expected \`${name}\` to be an object, got ${show(value)}`)
  }
  if (known === undefined) return
  const unknown = unknownOptionMessage(value, known.names, known.of, known.hints)
  if (unknown !== undefined) throw new InvalidArgumentError(unknown)
}

/**
 * How one option of a schema is read: its check, given the value passed (a bad one throws
 * `InvalidArgumentError` naming it), or its default when it was left out. Both see what the
 * options before it in the schema read to, and the whole argument (`fallback` may throw: a
 * required option).
 */
export interface OptionRule<T, R, I> {
  /** The option it reads, when not the name it is stored under. */
  readonly from?: string
  readonly check: (value: unknown, name: string, read: R, options: I) => T
  readonly fallback: (read: R, options: I) => T
}

/** One public entry's options: each result field's rule, read in the order written. */
export type OptionSchema<O, I> = { readonly [K in keyof O]: OptionRule<O[K], Partial<O>, I> }

/**
 * An options argument read in one place, by its schema: its names checked (`checkOptions`), then
 * each field by its rule in the schema's order. The result is frozen: nothing below checks it again.
 */
export function readOptions<O extends object, I extends object>(options: I, names: OptionNames, schema: OptionSchema<O, I>): Readonly<O> {
  checkOptions(options, names)
  const read: Partial<O> = {}
  for (const key of Object.keys(schema) as (keyof O & string)[]) {
    const rule = schema[key]
    const name = rule.from ?? key
    const given = (options as Record<string, unknown>)[name]
    read[key] = given === undefined ? rule.fallback(read, options) : rule.check(given, name, read, options)
  }
  return Object.freeze(read) as O
}

export function checkFunction(value: unknown, name: string): void {
  if (typeof value !== 'function') throw new InvalidArgumentError(`Expected \`${name}\` to be a function, got ${show(value)}`)
}

export function checkBoolean(value: unknown, name: string): boolean {
  if (typeof value !== 'boolean') throw new InvalidArgumentError(`Expected \`${name}\` to be a boolean, got ${show(value)}`)
  return value
}

export { describeValue } from '../errors/describe-value.js'
