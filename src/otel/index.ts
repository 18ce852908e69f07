/**
 * `fencelock/otel`: OpenTelemetry spans and metrics from fencelock's diagnostics_channel events.
 * It loads no library code (only @opentelemetry/api and node:diagnostics_channel): the events
 * connect it to whichever copy of fencelock the application uses. Start with {@link instrument}.
 *
 * @packageDocumentation
 * @module fencelock/otel
 */
export { instrument, type Instrumentation } from './instrument.js'
export type { InstrumentOptions } from './options.js'
export { InvalidArgumentError, MissingDependencyError } from '../errors/errors.js'
export { ATTRIBUTES, METRICS, SCOPE, SPANS } from './names.js'
