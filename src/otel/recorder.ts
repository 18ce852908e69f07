import type { Attributes, Counter, Histogram, Meter, MeterProvider, Tracer, TracerProvider } from '@opentelemetry/api'
import { api } from './api.js'
import { readAcquire, readFencedWrite, readHold, type HoldEvent } from './events.js'
import { ATTRIBUTES as A, METRICS, SCOPE, SPANS } from './names.js'
import type { CheckedOptions } from './options.js'

const { metrics, SpanKind, SpanStatusCode, trace } = api

/** What each diagnostics_channel message turns into. */
export interface Recorder {
  acquire(message: unknown): void
  release(message: unknown): void
  lost(message: unknown): void
  fencedWrite(message: unknown): void
}

interface Instruments {
  readonly waitDuration: Histogram
  readonly holdDuration: Histogram
  readonly acquires: Counter
  readonly lost: Counter
  readonly contention: Counter
  readonly fencedWrites: Counter
}

// Seconds. A fast-path acquire is one round trip (a fraction of a millisecond on a LAN); waits end
// at the caller's `wait`, holds at whatever the work takes.
const WAIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
const HOLD_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600]

function createInstruments(meter: Meter): Instruments {
  return {
    waitDuration: meter.createHistogram(METRICS.waitDuration, {
      unit: 's',
      description: 'Time spent in acquire, until the lock was acquired or the call timed out, was aborted or failed',
      advice: { explicitBucketBoundaries: WAIT_BUCKETS },
    }),
    holdDuration: meter.createHistogram(METRICS.holdDuration, {
      unit: 's',
      description: 'Time a lease was held, from its acquisition until it was released or lost',
      advice: { explicitBucketBoundaries: HOLD_BUCKETS },
    }),
    acquires: meter.createCounter(METRICS.acquires, { unit: '{acquire}', description: 'Settled acquire calls, by outcome' }),
    lost: meter.createCounter(METRICS.lost, { unit: '{lease}', description: 'Leases lost before their release, by reason' }),
    contention: meter.createCounter(METRICS.contention, {
      unit: '{acquire}',
      description: 'Acquire calls that found the lock held and had to wait, or timed out',
    }),
    fencedWrites: meter.createCounter(METRICS.fencedWrites, { unit: '{write}', description: 'Fenced writes, accepted or refused by the fence' }),
  }
}

/** `make(provider)`, made again only when `provider()` returns another object (a global provider set later). */
function perProvider<P extends object, T>(provider: () => P, make: (provider: P) => T): () => T {
  let last: { provider: P; value: T } | undefined
  return () => {
    const current = provider()
    if (last?.provider !== current) last = { provider: current, value: make(current) }
    return last.value
  }
}

/** A set that forgets its oldest entries beyond `limit`, so that it cannot grow without bound. */
class RecentSet {
  readonly #items = new Set<string>()
  constructor(readonly limit: number) {}
  add(item: string): void {
    this.#items.add(item)
    if (this.#items.size > this.limit) this.#items.delete(this.#items.values().next().value as string)
  }
  take(item: string): boolean {
    return this.#items.delete(item)
  }
}

// Span times are epoch ms on one clock for the whole process (performance.timeOrigin plus
// performance.now()): a span lasts exactly the waitedMs or heldMs the library measured, and spans
// order as their events did. (Handed performance.now() values, the SDK anchors each span to the
// wall clock when it is made: two spans made 80 ms apart were 7 ms out of order in CI.) A span
// starts when the event says it did (startedAt, acquiredAt): counted back from the moment this
// subscriber reads the clock, a process descheduled between the library's reading and this one
// (a loaded machine: 3 to 7 ms) made a hold span start before its wait span. Events of an older
// library version, without those fields, are counted back from now.
const now = (): number => performance.timeOrigin + performance.now()

/** The span [start, end] of `ms` that began at `at` (epoch ms), or that ends now for an event that does not say when it began. */
const spanOf = (at: number | undefined, ms: number): { start: number; end: number } => {
  if (at !== undefined) return { start: at, end: at + ms }
  const end = now()
  return { start: end - ms, end }
}

/** Records spans and metrics for the events, to the providers of `options`. */
export function createRecorder(options: CheckedOptions): Recorder {
  const tracer = perProvider<TracerProvider, Tracer>(
    () => options.tracerProvider ?? trace.getTracerProvider(),
    (p) => p.getTracer(SCOPE),
  )
  const instruments = perProvider<MeterProvider, Instruments>(
    () => options.meterProvider ?? metrics.getMeterProvider(),
    (p) => createInstruments(p.getMeter(SCOPE)),
  )
  const withResource = (attributes: Attributes, resource: string): Attributes =>
    options.includeResourceInMetrics ? { ...attributes, [A.resource]: resource } : attributes
  // A lost lease is usually released afterwards (withLock, `await using`), and that release is
  // published too (released: false; true for a lease let go by locks.close(), still in Redis): its
  // hold span already ended at the loss. The bound keeps leases lost and never released from
  // piling up.
  const endedByLoss = new RecentSet(1_024)

  function hold(event: HoldEvent, lost: boolean): void {
    const { start, end } = spanOf(event.acquiredAt, event.heldMs)
    const attributes: Attributes = { [A.resource]: event.resource, [A.kind]: event.kind }
    if (event.fence !== undefined) attributes[A.fence] = event.fence
    if (lost) attributes[A.lostReason] = event.reason ?? 'unknown'
    else attributes[A.released] = true
    const span = tracer().startSpan(SPANS.hold, { kind: SpanKind.INTERNAL, startTime: start, attributes })
    if (lost) {
      span.addEvent('lost', { [A.lostReason]: event.reason ?? 'unknown' }, end)
      span.setStatus({ code: SpanStatusCode.ERROR, message: `lease lost: ${event.reason ?? 'unknown'}` })
    }
    span.end(end)
    const m = instruments()
    m.holdDuration.record(event.heldMs / 1_000, withResource({ [A.kind]: event.kind, [A.outcome]: lost ? 'lost' : 'released' }, event.resource))
    if (lost) m.lost.add(1, withResource({ [A.kind]: event.kind, [A.lostReason]: event.reason ?? 'unknown' }, event.resource))
  }

  return {
    acquire(message) {
      const e = readAcquire(message)
      const { start, end } = spanOf(e.startedAt, e.waitedMs)
      const failed = e.outcome === 'timeout' || e.outcome === 'error'
      const attributes: Attributes = { [A.resource]: e.resource, [A.kind]: e.kind, [A.outcome]: e.outcome }
      if (e.fence !== undefined) attributes[A.fence] = e.fence
      if (e.attempts !== undefined) attributes[A.attempts] = e.attempts
      if (e.contended !== undefined) attributes[A.contended] = e.contended
      if (failed) attributes[A.errorType] = e.error instanceof Error ? e.error.name : e.outcome
      const span = tracer().startSpan(SPANS.wait, { kind: SpanKind.INTERNAL, startTime: start, attributes })
      if (failed) {
        if (e.error instanceof Error) span.recordException(e.error, end)
        span.setStatus({ code: SpanStatusCode.ERROR, message: e.error instanceof Error ? e.error.message : e.outcome })
      }
      span.end(end)

      const m = instruments()
      const metricAttributes = withResource({ [A.kind]: e.kind, [A.outcome]: e.outcome }, e.resource)
      m.acquires.add(1, metricAttributes)
      m.waitDuration.record(e.waitedMs / 1_000, metricAttributes)
      // Contention: the library says the lock was taken by someone else, or the wait ran out.
      if (e.outcome === 'timeout' || e.contended === true) m.contention.add(1, metricAttributes)
    },
    release(message) {
      const e = readHold(message)
      if (e.token !== undefined && endedByLoss.take(e.token)) return
      // released: false without an earlier loss: this release found the lock gone, and the loss
      // it publishes right after ends the hold span.
      if (!e.released) return
      hold(e, false)
    },
    lost(message) {
      const e = readHold(message)
      if (e.token !== undefined) endedByLoss.add(e.token)
      hold(e, true)
    },
    fencedWrite(message) {
      const e = readFencedWrite(message)
      instruments().fencedWrites.add(1, { [A.accepted]: e.accepted, [A.operation]: e.operation })
    },
  }
}
