import type { MeterProvider, TracerProvider } from '@opentelemetry/api'
import { unknownOptionMessage } from '../util/unknown-option.js'
import { InvalidArgumentError } from '../errors/errors.js'
import { describeValue } from '../errors/describe-value.js'

/** Options of `instrument()`. */
export interface InstrumentOptions {
  /**
   * Where spans go.
   * Default: the global one (`trace.getTracerProvider()`), looked up as each span is made, so a
   * provider registered after `instrument()` is used from then on.
   */
  readonly tracerProvider?: TracerProvider
  /**
   * Where metrics go.
   * Default: the global one (`metrics.getMeterProvider()`), looked up as each value is recorded,
   * so a provider registered after `instrument()` is used from then on.
   */
  readonly meterProvider?: MeterProvider
  /**
   * Put `fencelock.resource` on metrics too. Every resource name then starts its own time series
   * in every metric: leave it off when resource names carry ids (`account:123`), or the metrics
   * backend pays for each id. Spans always carry the resource.
   * Default: `false`.
   */
  readonly includeResourceInMetrics?: boolean
}

/** Options after checking, defaults not applied (an absent provider means "the global one"). */
export interface CheckedOptions {
  readonly tracerProvider: TracerProvider | undefined
  readonly meterProvider: MeterProvider | undefined
  readonly includeResourceInMetrics: boolean
}

const KNOWN = ['tracerProvider', 'meterProvider', 'includeResourceInMetrics'] as const

function checkProvider(value: unknown, name: string, method: string, what: string): void {
  if (value === undefined) return
  if (typeof value !== 'object' || value === null || typeof (value as Record<string, unknown>)[method] !== 'function') {
    throw new InvalidArgumentError(`Expected \`${name}\` to be an OpenTelemetry ${what} (an object with ${method}()), got ${describeValue(value)}`)
  }
}

/** Checks `instrument()`'s options; throws `InvalidArgumentError` naming the first bad value. */
export function checkOptions(options: unknown): CheckedOptions {
  if (options === undefined) return { tracerProvider: undefined, meterProvider: undefined, includeResourceInMetrics: false }
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError(`Expected \`options\` to be an object, got ${describeValue(options)}`)
  }
  // A misspelt provider option would otherwise send everything to the global provider, silently.
  const unknown = unknownOptionMessage(options, KNOWN, 'instrument')
  if (unknown !== undefined) throw new InvalidArgumentError(unknown)
  const { tracerProvider, meterProvider, includeResourceInMetrics } = options as Record<string, unknown>
  checkProvider(tracerProvider, 'tracerProvider', 'getTracer', 'TracerProvider')
  checkProvider(meterProvider, 'meterProvider', 'getMeter', 'MeterProvider')
  if (includeResourceInMetrics !== undefined && typeof includeResourceInMetrics !== 'boolean') {
    throw new InvalidArgumentError(`Expected \`includeResourceInMetrics\` to be a boolean, got ${describeValue(includeResourceInMetrics)}`)
  }
  return {
    tracerProvider: tracerProvider as TracerProvider | undefined,
    meterProvider: meterProvider as MeterProvider | undefined,
    includeResourceInMetrics: includeResourceInMetrics ?? false,
  }
}
