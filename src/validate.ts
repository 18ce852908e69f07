import { InvalidArgumentError } from './errors.js'

/** Longest TTL accepted anywhere: 24 days, below setTimeout's 2^31-1 ms limit. */
export const MAX_TTL = 2_073_600_000
/** Resource names are keys: keep them well inside Redis' and humans' comfort. */
export const MAX_RESOURCE_LENGTH = 1024

const show = (value: unknown): string => {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)
  if (typeof value === 'bigint') return `${value}n`
  if (typeof value === 'number' || typeof value === 'boolean' || value == null) return String(value)
  return Object.prototype.toString.call(value)
}

export const MAX_TOKEN_LENGTH = 256

export function checkTtl(value: unknown, name = 'ttl', max = MAX_TTL): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0 || value > max) {
    throw new InvalidArgumentError(
      `Expected \`${name}\` to be a positive integer number of milliseconds no larger than ${max}, got ${show(value)}`,
    )
  }
  return value
}

export function checkWait(value: unknown, name = 'wait'): number {
  if (value === Infinity) return value
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TTL) {
    throw new InvalidArgumentError(
      `Expected \`${name}\` to be a non-negative integer number of milliseconds or Infinity, got ${show(value)}`,
    )
  }
  return value
}

export function checkResource(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_RESOURCE_LENGTH) {
    throw new InvalidArgumentError(
      `Expected \`resource\` to be a non-empty string of at most ${MAX_RESOURCE_LENGTH} characters, got ${show(value)}`,
    )
  }
  return value
}

/** A lease token given back by the caller (`lease.token`, or the CLI's output). */
export function checkToken(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_TOKEN_LENGTH) {
    throw new InvalidArgumentError(`Expected \`token\` to be a lease's token (a non-empty string of at most ${MAX_TOKEN_LENGTH} characters), got ${show(value)}`)
  }
  return value
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

export function checkString(value: unknown, name: string, allowEmpty = false): string {
  if (typeof value !== 'string' || (!allowEmpty && value.length === 0)) {
    throw new InvalidArgumentError(`Expected \`${name}\` to be a${allowEmpty ? '' : ' non-empty'} string, got ${show(value)}`)
  }
  return value
}

export function checkFunction(value: unknown, name: string): void {
  if (typeof value !== 'function') throw new InvalidArgumentError(`Expected \`${name}\` to be a function, got ${show(value)}`)
}

export function checkBoolean(value: unknown, name: string): boolean {
  if (typeof value !== 'boolean') throw new InvalidArgumentError(`Expected \`${name}\` to be a boolean, got ${show(value)}`)
  return value
}

export { show as describeValue }
