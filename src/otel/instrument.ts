import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { api } from './api.js'
import { InvalidArgumentError } from '../errors/errors.js'
import { checkOptions, type CheckedOptions, type InstrumentOptions } from './options.js'
import { createRecorder, type Recorder } from './recorder.js'

/** What `instrument()` returns: stops the recording it started. */
export interface Instrumentation {
  /** Stops recording (unsubscribes from every channel once the last handle on it is closed). Idempotent. */
  close(): void
  /** `using otel = instrument()`: closes at the end of the block. */
  [Symbol.dispose](): void
}

// The channel names of src/util/telemetry.ts, written out: importing that module would pull library
// code into this entry point (test/otel/otel.test.ts checks that they subscribe to the library's channels).
const CHANNELS: readonly (readonly [string, keyof Recorder])[] = [
  ['fencelock:acquire', 'acquire'],
  ['fencelock:release', 'release'],
  ['fencelock:lost', 'lost'],
  ['fencelock:fenced-write', 'fencedWrite'],
]

interface Subscription {
  readonly options: CheckedOptions
  users: number
  readonly stop: () => void
}

const active: Subscription[] = []

function start(options: CheckedOptions): Subscription {
  const recorder = createRecorder(options)
  const listeners = CHANNELS.map(([name, method]) => {
    // diagnostics_channel rethrows a subscriber's error as an uncaught exception: never let one out.
    const listener = (message: unknown) => {
      try {
        recorder[method](message)
      } catch (error) {
        api.diag.error(`fencelock/otel: could not record a ${name} event`, error)
      }
    }
    subscribe(name, listener)
    return [name, listener] as const
  })
  return { options, users: 0, stop: () => listeners.forEach(([name, listener]) => unsubscribe(name, listener)) }
}

/**
 * Records fencelock's diagnostics_channel events as OpenTelemetry spans (`fencelock.wait`,
 * `fencelock.hold`) and metrics (`fencelock.wait.duration`, `fencelock.hold.duration`,
 * `fencelock.acquires`, `fencelock.lost`, `fencelock.contention`, `fencelock.fenced_writes`) until
 * the returned handle is closed. Covers every `createLocks` instance in the process, including
 * ones created before this call. Calling it again with the same providers (or both times the
 * global ones) records nothing twice: it returns another handle on the same recording, which stops
 * when every handle is closed; the same providers with a different `includeResourceInMetrics`
 * throw. Bad options throw `InvalidArgumentError` (code `INVALID_ARGUMENT`) naming the value.
 */
export function instrument(options?: InstrumentOptions): Instrumentation {
  const checked = checkOptions(options)
  let subscription = active.find((s) => s.options.tracerProvider === checked.tracerProvider && s.options.meterProvider === checked.meterProvider)
  if (subscription && subscription.options.includeResourceInMetrics !== checked.includeResourceInMetrics) {
    throw new InvalidArgumentError(
      `instrument() already records to these providers with includeResourceInMetrics: ${subscription.options.includeResourceInMetrics}, got ${checked.includeResourceInMetrics}: close the earlier handle first (two recordings would count every event twice)`,
    )
  }
  if (subscription === undefined) {
    subscription = start(checked)
    active.push(subscription)
  }
  const shared = subscription
  shared.users++
  let closed = false
  const close = (): void => {
    if (closed) return
    closed = true
    if (--shared.users > 0) return
    shared.stop()
    active.splice(active.indexOf(shared), 1)
  }
  return { close, [Symbol.dispose]: close }
}
