// Records fencelock's telemetry events in a test, so that it can assert the cause of what happened
// (why a waiter woke, why a lease was lost) rather than how long it took.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { AcquireEvent, LostEvent, TelemetryEvents, WakeReason } from '../src/index.js'

export interface Recorder<K extends keyof TelemetryEvents> {
  /** Every event seen since the recorder started, oldest first. */
  readonly events: TelemetryEvents[K][]
  /** Stops recording (the events seen stay). */
  stop(): void
}

/** Records the events of one channel from now on; call `stop()` (an afterAll or finally) when done. */
export function record<K extends keyof TelemetryEvents>(name: K): Recorder<K> {
  const events: TelemetryEvents[K][] = []
  const listener = (message: unknown) => void events.push(message as TelemetryEvents[K])
  subscribe(name, listener)
  return { events, stop: () => void unsubscribe(name, listener) }
}

/** Records `fencelock:acquire`: `of(resource)` its ended acquisitions, `wakes(resource)` why each of their attempts after waiting went out. */
export function recordAcquires(): Recorder<'fencelock:acquire'> & {
  of(resource: string): AcquireEvent[]
  wakes(resource: string): WakeReason[]
} {
  const recorder = record('fencelock:acquire')
  const of = (resource: string) => recorder.events.filter((e) => e.resource === resource)
  return { ...recorder, of, wakes: (resource) => of(resource).flatMap((e) => e.wakes) }
}

/** Records `fencelock:lost`: `reasons(resource)` the loss reasons of its leases, in order. */
export function recordLosses(): Recorder<'fencelock:lost'> & { reasons(resource: string): LostEvent['reason'][] } {
  const recorder = record('fencelock:lost')
  return { ...recorder, reasons: (resource) => recorder.events.filter((e) => e.resource === resource).map((e) => e.reason) }
}
