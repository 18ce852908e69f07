import type { FencelockErrorCode } from '../errors/errors.js'

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

export { describeValue } from '../errors/describe-value.js'

/**
 * `fencelock/otel` was imported without `@opentelemetry/api` installed (an optional peer
 * dependency of fencelock: only this entry needs it). Thrown while the entry loads, so importing
 * `fencelock/otel` rejects with it (ESM) or `require` throws it (CommonJS): branch on `err.code`.
 */
export class MissingDependencyError extends Error {
  /** Always `MISSING_DEPENDENCY`. */
  readonly code: FencelockErrorCode = 'MISSING_DEPENDENCY'
  /** The package to install. */
  readonly dependency: string
  constructor(dependency: string, message: string, cause: unknown) {
    super(message, { cause })
    this.name = 'MissingDependencyError'
    this.dependency = dependency
  }
}
