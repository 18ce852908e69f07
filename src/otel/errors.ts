import type { FencelockErrorCode } from '../errors.js'

/**
 * A bad option passed to `instrument()`. It has the `name` and `code` (`INVALID_ARGUMENT`) of
 * fencelock's own `InvalidArgumentError`, so `err.code` checks work the same; it is a separate
 * class (not `instanceof FencelockError`) because this entry point loads none of the library's
 * code, only its event names.
 */
export class InvalidArgumentError extends Error {
  /** Always `INVALID_ARGUMENT`, as on fencelock's own `InvalidArgumentError`. */
  readonly code: FencelockErrorCode = 'INVALID_ARGUMENT'
  constructor(message: string) {
    super(message)
    this.name = 'InvalidArgumentError'
  }
}

/** A value as it should appear in an error message: short, and never `[object Object]`. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)
  if (typeof value === 'bigint') return `${value}n`
  if (typeof value === 'function') return `a function${value.name ? ` (${value.name})` : ''}`
  if (Array.isArray(value)) return `an array of ${value.length}`
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value)
    const named = value.constructor?.name && value.constructor !== Object ? `a ${value.constructor.name}` : 'an object'
    return keys.length === 0 ? `${named} with no own keys` : `${named} with keys ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', …' : ''}`
  }
  return String(value)
}
