// fencelock/otel against a real redis-server, with the OpenTelemetry SDK's in-memory exporters:
// acquire/release give a wait span and a hold span with the right attributes and durations; a
// timeout gives an ERROR wait span and a contention count; a lease lost while Redis is frozen
// (SIGSTOP) gives a `lost` span event and a fencelock.lost count with its reason; fenced writes
// are counted; close() stops recording; nothing is recorded without instrument(); options are
// checked. The lease-level tests run once per client adapter.
import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel'
import { readdirSync, readFileSync } from 'node:fs'
import { diag, DiagLogLevel, metrics, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api'
import { MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { claimFence, createLocks, FencelockError, fencedSet, LockTimeoutError, telemetry } from '../../src/index.js'
import { instrument, InvalidArgumentError, METRICS, SPANS, type Instrumentation } from '../../src/otel/index.js'
import { adapters } from '../../harness/clients.js'
import { requireRedisOrSkip } from '../../harness/redis-server.js'
import { closeQuietly, keysOf, sleep, uniquePrefix, until } from '../../harness/util.js'
import { useClient, useRedis } from '../../harness/per-adapter.js'

/** Collects on demand: no timer, no export interval. */
class Reader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** A tracer provider, a meter provider and what they recorded. */
function sdk() {
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const reader = new Reader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  return {
    tracerProvider,
    meterProvider,
    spans: (name?: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => name === undefined || s.name === name),
    /** Data points of one metric (empty if it was never recorded), with its unit. */
    async metric(name: string): Promise<{ unit: string | undefined; points: DataPoint<unknown>[] }> {
      const { resourceMetrics, errors } = await reader.collect()
      expect(errors).toEqual([])
      const found = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name)
      return { unit: found?.descriptor.unit, points: (found?.dataPoints ?? []) as DataPoint<unknown>[] }
    },
    async shutdown() {
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()])
    },
  }
}
type Sdk = ReturnType<typeof sdk>

const ms = (span: ReadableSpan) => span.duration[0] * 1_000 + span.duration[1] / 1e6
const CHANNELS = [telemetry.acquire, telemetry.release, telemetry.lost, telemetry.fencedWrite]
const subscribed = () => CHANNELS.map((c) => c.hasSubscribers)

/** The counter value (or histogram count) of the point whose attributes are exactly `attributes`. */
async function valueOf(otel: Sdk, name: string, attributes: Attributes): Promise<number | undefined> {
  const point = (await otel.metric(name)).points.find((p) => JSON.stringify(sorted(p.attributes)) === JSON.stringify(sorted(attributes)))
  if (point === undefined) return undefined
  return typeof point.value === 'number' ? point.value : (point.value as Histogram).count
}
const sorted = (a: Attributes) => Object.fromEntries(Object.entries(a).sort(([x], [y]) => x.localeCompare(y)))

describe.skipIf(!requireRedisOrSkip())('fencelock/otel', () => {
  describe.each(adapters)('with $name', (adapter) => {
    const server = useRedis()
    const t = useClient(adapter, server, { prefix: 'otel' })
    let otel: Sdk
    let handle: Instrumentation
    beforeEach(() => {
      otel = sdk()
      handle = instrument({ tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider })
    })
    afterEach(async () => {
      handle.close()
      await otel.shutdown()
    })

    it('acquire and release: a wait span and a hold span with their attributes and durations, and the metrics', async () => {
      const before = performance.now()
      const lease = await t.locks.acquire('acct', { ttl: 5_000 })
      const acquiring = performance.now() - before
      // Time must pass: a hold long enough that its span's duration can be told from none.
      await sleep(80)
      const holding = performance.now() - before
      expect(await lease.release()).toBe(true)
      const released = performance.now() - before

      const [wait, ...moreWaits] = otel.spans(SPANS.wait)
      expect(moreWaits).toEqual([])
      expect(wait!.attributes).toEqual({
        'fencelock.resource': 'acct',
        'fencelock.kind': 'mutex',
        'fencelock.outcome': 'acquired',
        'fencelock.fence': lease.fence,
        ...reportedByLibrary(wait!),
      })
      expect(wait!.status.code).toBe(SpanStatusCode.UNSET)
      expect(wait!.instrumentationScope.name).toBe('fencelock')
      expect(ms(wait!)).toBeGreaterThan(0)
      expect(ms(wait!)).toBeLessThanOrEqual(acquiring)

      const [hold, ...moreHolds] = otel.spans(SPANS.hold)
      expect(moreHolds).toEqual([])
      expect(hold!.attributes).toEqual({ 'fencelock.resource': 'acct', 'fencelock.kind': 'mutex', 'fencelock.fence': lease.fence, 'fencelock.released': true })
      expect(hold!.status.code).toBe(SpanStatusCode.UNSET)
      expect(hold!.events).toEqual([])
      expect(ms(hold!)).toBeGreaterThanOrEqual(holding - acquiring - 1)
      expect(ms(hold!)).toBeLessThanOrEqual(released)
      // The hold counts from the start of the attempt that won (before its request was sent): it
      // starts inside the wait span (1 ms for the SDK's per-span clock offset).
      const startMs = (s: ReadableSpan) => s.startTime[0] * 1_000 + s.startTime[1] / 1e6
      expect(startMs(hold!)).toBeGreaterThanOrEqual(startMs(wait!) - 1)
      expect(startMs(hold!)).toBeLessThanOrEqual(startMs(wait!) + ms(wait!) + 1)

      expect(await valueOf(otel, METRICS.acquires, { 'fencelock.kind': 'mutex', 'fencelock.outcome': 'acquired' })).toBe(1)
      const waitMetric = await otel.metric(METRICS.waitDuration)
      expect(waitMetric.unit).toBe('s')
      expect(waitMetric.points).toHaveLength(1)
      expect((waitMetric.points[0]!.value as Histogram).sum).toBeCloseTo(ms(wait!) / 1_000, 6)
      const holdMetric = await otel.metric(METRICS.holdDuration)
      expect(holdMetric.unit).toBe('s')
      expect(holdMetric.points.map((p) => p.attributes)).toEqual([{ 'fencelock.kind': 'mutex', 'fencelock.outcome': 'released' }])
      expect((holdMetric.points[0]!.value as Histogram).sum).toBeCloseTo(ms(hold!) / 1_000, 6)
      expect((await otel.metric(METRICS.contention)).points).toEqual([]) // nobody else held it
      expect((await otel.metric(METRICS.lost)).points).toEqual([])
    })

    it('a timeout gives an ERROR wait span with the error and counts as contention; a waiter that got in counts as the library says', async () => {
      const raw: Record<string, unknown>[] = []
      const listener = (message: unknown) => raw.push(message as Record<string, unknown>)
      subscribe('fencelock:acquire', listener)
      let timedOut: unknown
      let waiterToken: string | undefined
      try {
        const holder = await t.locks.acquire('busy', { ttl: 5_000 })
        timedOut = await t.locks.acquire('busy', { wait: 150 }).catch((e: unknown) => e)
        expect(timedOut).toBeInstanceOf(LockTimeoutError)
        const waiter = t.locks.acquire('busy', { wait: 5_000 })
        await until('the waiter is in line', async () => (await t.locks.inspect('busy')).waiters === 1)
        await holder.release()
        const lease = await waiter
        waiterToken = lease.token
        await lease.release()
      } finally {
        unsubscribe('fencelock:acquire', listener)
      }

      const timeout = otel.spans(SPANS.wait).find((s) => s.attributes['fencelock.outcome'] === 'timeout')!
      expect(timeout.attributes).toMatchObject({ 'fencelock.resource': 'busy', 'fencelock.kind': 'mutex', 'error.type': 'LockTimeoutError' })
      expect(timeout.attributes['fencelock.fence']).toBeUndefined()
      expect(timeout.status).toEqual({ code: SpanStatusCode.ERROR, message: (timedOut as Error).message })
      expect(timeout.events.map((e) => [e.name, e.attributes?.['exception.message']])).toEqual([['exception', (timedOut as Error).message]])
      expect(ms(timeout)).toBeGreaterThanOrEqual(145)
      expect(ms(timeout)).toBeLessThan(2_000)

      expect(await valueOf(otel, METRICS.acquires, { 'fencelock.kind': 'mutex', 'fencelock.outcome': 'timeout' })).toBe(1)
      expect(await valueOf(otel, METRICS.acquires, { 'fencelock.kind': 'mutex', 'fencelock.outcome': 'acquired' })).toBe(2)
      expect(await valueOf(otel, METRICS.contention, { 'fencelock.kind': 'mutex', 'fencelock.outcome': 'timeout' })).toBe(1)
      // The waiter that got in after the release had to wait: counted when the library's event says so
      // (`contended`, or a second attempt); an older event without those fields cannot tell.
      const waited = raw.find((e) => e.outcome === 'acquired' && e.token === waiterToken)!
      const saysContended = waited.contended === true || (waited.contended === undefined && typeof waited.attempts === 'number' && waited.attempts > 1)
      expect(await valueOf(otel, METRICS.contention, { 'fencelock.kind': 'mutex', 'fencelock.outcome': 'acquired' })).toBe(saysContended ? 1 : undefined)
    })

    it('tryAcquire: a lease and a busy answer, recorded as the library publishes them (no error status for busy)', async () => {
      const raw: Record<string, unknown>[] = []
      const listener = (message: unknown) => raw.push(message as Record<string, unknown>)
      subscribe('fencelock:acquire', listener)
      try {
        const lease = await t.locks.tryAcquire('try', { ttl: 5_000 })
        expect(lease).not.toBeNull()
        expect(await t.locks.tryAcquire('try', { ttl: 5_000 })).toBeNull()
        await lease!.release()
      } finally {
        unsubscribe('fencelock:acquire', listener)
      }
      // Its lease ends with a hold span whether or not tryAcquire publishes an acquire event.
      expect(otel.spans(SPANS.hold).map((s) => s.attributes['fencelock.resource'])).toEqual(['try'])
      const waits = otel.spans(SPANS.wait)
      expect(waits.map((s) => s.attributes['fencelock.outcome'])).toEqual(raw.map((e) => e.outcome))
      const busy = waits.find((s) => s.attributes['fencelock.outcome'] === 'busy')
      if (raw.length === 0) return // a library version whose tryAcquire publishes nothing: no wait span, checked above
      expect(raw.map((e) => e.outcome)).toEqual(['acquired', 'busy'])
      expect(busy!.status.code).toBe(SpanStatusCode.UNSET)
      expect(busy!.attributes['error.type']).toBeUndefined()
      expect(await valueOf(otel, METRICS.acquires, { 'fencelock.kind': 'mutex', 'fencelock.outcome': 'busy' })).toBe(1)
      expect(await valueOf(otel, METRICS.contention, { 'fencelock.kind': 'mutex', 'fencelock.outcome': 'busy' })).toBe(
        raw[1]!.contended === true ? 1 : undefined,
      )
    })

    it('a lease lost while Redis is frozen (SIGSTOP): a hold span with a `lost` event and ERROR status, and fencelock.lost by reason', async () => {
      const lease = await t.locks.acquire('frozen', { ttl: 300, autoExtend: true })
      server.redis.pause()
      try {
        await new Promise((resolve) => lease.signal.addEventListener('abort', resolve))
      } finally {
        server.redis.resume()
      }
      expect(await lease.release()).toBe(false) // after the loss: must not end a second hold span

      const holds = otel.spans(SPANS.hold)
      expect(holds).toHaveLength(1)
      const reason = holds[0]!.attributes['fencelock.lost.reason']
      expect(['expired', 'unreachable']).toContain(reason)
      expect(holds[0]!.attributes).toEqual({
        'fencelock.resource': 'frozen',
        'fencelock.kind': 'mutex',
        'fencelock.fence': lease.fence,
        'fencelock.lost.reason': reason,
      })
      expect(holds[0]!.events.map((e) => [e.name, e.attributes])).toEqual([['lost', { 'fencelock.lost.reason': reason }]])
      expect(holds[0]!.status).toEqual({ code: SpanStatusCode.ERROR, message: `lease lost: ${reason}` })
      expect(ms(holds[0]!)).toBeGreaterThan(150) // at least most of the 300 ms ttl, minus the drift margin
      expect(ms(holds[0]!)).toBeLessThan(3_000)

      expect(await valueOf(otel, METRICS.lost, { 'fencelock.kind': 'mutex', 'fencelock.lost.reason': reason! })).toBe(1)
      expect(await valueOf(otel, METRICS.holdDuration, { 'fencelock.kind': 'mutex', 'fencelock.outcome': 'lost' })).toBe(1)
      expect(await valueOf(otel, METRICS.holdDuration, { 'fencelock.kind': 'mutex', 'fencelock.outcome': 'released' })).toBeUndefined()
    })

    it('fenced writes are counted by accepted and operation', async () => {
      const lease = await t.locks.acquire('data', { ttl: 5_000 })
      expect(await fencedSet(t.client.raw, 'otel-data', 'v', lease.fence)).toBe(true)
      expect(await claimFence(t.client.raw, 'otel-data', lease.fence - 1)).toBe(false)
      await lease.release()
      const points = (await otel.metric(METRICS.fencedWrites)).points
      expect(points.map((p) => [p.attributes, p.value])).toEqual(
        expect.arrayContaining([
          [{ 'fencelock.fenced_write.accepted': true, 'fencelock.fenced_write.operation': 'fencedSet' }, 1],
          [{ 'fencelock.fenced_write.accepted': false, 'fencelock.fenced_write.operation': 'claimFence' }, 1],
        ]),
      )
      expect(points).toHaveLength(2)
    })

    it('close() stops recording and unsubscribes from every channel; a second close() is harmless', async () => {
      expect(subscribed()).toEqual([true, true, true, true])
      handle.close()
      handle.close()
      expect(subscribed()).toEqual([false, false, false, false])
      const lease = await t.locks.acquire('after-close', { ttl: 1_000 })
      await fencedSet(t.client.raw, 'otel-after', 'v', lease.fence)
      await lease.release()
      expect(otel.spans()).toEqual([])
      for (const name of Object.values(METRICS)) expect((await otel.metric(name)).points, name).toEqual([])
    })
  })

  describe('instrument() itself', () => {
    const server = useRedis()
    const t = useClient(adapters[0]!, server, { prefix: 'otel-api' })
    const cycle = async (resource: string) => (await t.locks.acquire(resource, { ttl: 1_000 })).release()

    it('records nothing when instrument() was never called, even with global providers; with no options it uses the global ones, also ones registered after it', async () => {
      const otel = sdk()
      try {
        trace.setGlobalTracerProvider(otel.tracerProvider)
        metrics.setGlobalMeterProvider(otel.meterProvider)
        expect(subscribed()).toEqual([false, false, false, false])
        await cycle('never')
        expect(otel.spans()).toEqual([])
        for (const name of Object.values(METRICS)) expect((await otel.metric(name)).points, name).toEqual([])

        trace.disable()
        metrics.disable()
        const handle = instrument()
        try {
          trace.setGlobalTracerProvider(otel.tracerProvider)
          metrics.setGlobalMeterProvider(otel.meterProvider)
          await cycle('global')
        } finally {
          handle.close()
        }
        expect(otel.spans().map((s) => [s.name, s.attributes['fencelock.resource']])).toEqual([
          [SPANS.wait, 'global'],
          [SPANS.hold, 'global'],
        ])
        expect(await valueOf(otel, METRICS.acquires, { 'fencelock.kind': 'mutex', 'fencelock.outcome': 'acquired' })).toBe(1)
      } finally {
        trace.disable()
        metrics.disable()
        await otel.shutdown()
      }
    })

    it('spans start when the events say they did, however late the recorder reads the clock; an event that does not say ends now', async () => {
      const otel = sdk()
      const handle = instrument({ tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider })
      const epochMs = (time: ReadableSpan['startTime']) => time[0] * 1_000 + time[1] / 1e6
      // Read a second after the library measured them (a process descheduled in between): the
      // spans are where the events put them, not counted back from when the recorder ran.
      const startedAt = performance.timeOrigin + performance.now() - 1_000
      const acquiredAt = startedAt + 5
      const before = performance.timeOrigin + performance.now()
      try {
        channel('fencelock:acquire').publish({
          kind: 'mutex',
          resource: 'late',
          outcome: 'acquired',
          waitedMs: 12,
          startedAt,
          attempts: 1,
          contended: false,
          wakes: [],
          token: 'a',
          fence: 7,
        })
        channel('fencelock:release').publish({ kind: 'mutex', resource: 'late', token: 'a', fence: 7, released: true, heldMs: 80, acquiredAt })
        // A library version that publishes no start: the span ends when the recorder reads it.
        channel('fencelock:release').publish({ kind: 'mutex', resource: 'old', token: 'b', fence: 8, released: true, heldMs: 30 })
      } finally {
        handle.close()
      }
      const after = performance.timeOrigin + performance.now()
      const [wait] = otel.spans(SPANS.wait)
      const [hold, old] = otel.spans(SPANS.hold)
      // Epoch ms as doubles keep about a quarter of a microsecond: compared to 2 decimals of a ms.
      expect(epochMs(wait!.startTime)).toBeCloseTo(startedAt, 2)
      expect(ms(wait!)).toBeCloseTo(12, 2)
      expect(epochMs(hold!.startTime)).toBeCloseTo(acquiredAt, 2)
      expect(ms(hold!)).toBeCloseTo(80, 2)
      expect(old!.attributes['fencelock.resource']).toBe('old')
      expect(ms(old!)).toBeCloseTo(30, 2)
      expect(epochMs(old!.endTime)).toBeGreaterThanOrEqual(before)
      expect(epochMs(old!.endTime)).toBeLessThanOrEqual(after)
      await otel.shutdown()
    })

    it('every primitive is named by its kind: semaphore permits, read and write leases, withLocks', async () => {
      const otel = sdk()
      const handle = instrument({ meterProvider: otel.meterProvider, tracerProvider: otel.tracerProvider })
      try {
        await (await t.locks.semaphore('pool', { limit: 2 }).acquire({ ttl: 1_000 })).release()
        const config = t.locks.readWrite('config')
        await (await config.read({ ttl: 1_000 })).release()
        await (await config.write({ ttl: 1_000 })).release()
        await t.locks.withLocks(['a', 'b'], () => {}, { ttl: 1_000 })
      } finally {
        handle.close()
      }
      const kinds = (name: string) => otel.spans(name).map((s) => [s.attributes['fencelock.kind'], s.attributes['fencelock.resource']])
      expect(kinds(SPANS.wait)).toEqual(kinds(SPANS.hold))
      expect(kinds(SPANS.wait).map(([kind]) => kind)).toEqual(['semaphore', 'read', 'write', 'multi'])
      for (const kind of ['semaphore', 'read', 'write', 'multi']) {
        expect(await valueOf(otel, METRICS.acquires, { 'fencelock.kind': kind, 'fencelock.outcome': 'acquired' }), kind).toBe(1)
        expect(await valueOf(otel, METRICS.holdDuration, { 'fencelock.kind': kind, 'fencelock.outcome': 'released' }), kind).toBe(1)
      }
      await otel.shutdown()
    })

    it('a lease let go by locks.close() and released afterwards makes one hold span, ended by the loss (reason closed)', async () => {
      const otel = sdk()
      const handle = instrument({ meterProvider: otel.meterProvider, tracerProvider: otel.tracerProvider })
      const own = createLocks({ redis: t.client.raw, prefix: uniquePrefix('otel-close') })
      try {
        const lease = await own.acquire('closing', { ttl: 5_000 })
        await own.close()
        expect(await lease.release()).toBe(true) // still in Redis: a real release, after the loss
      } finally {
        handle.close()
        await closeQuietly([own])
      }
      const holds = otel.spans(SPANS.hold)
      expect(holds.map((s) => s.attributes['fencelock.lost.reason'])).toEqual(['closed'])
      expect(await valueOf(otel, METRICS.lost, { 'fencelock.kind': 'mutex', 'fencelock.lost.reason': 'closed' })).toBe(1)
      expect(await valueOf(otel, METRICS.holdDuration, { 'fencelock.kind': 'mutex', 'fencelock.outcome': 'released' })).toBeUndefined()
      await otel.shutdown()
    })

    it('a release that finds the lock gone (its key deleted) makes one hold span, ended by the loss (reason refused)', async () => {
      const otel = sdk()
      const handle = instrument({ meterProvider: otel.meterProvider, tracerProvider: otel.tracerProvider })
      const prefix = uniquePrefix('otel-gone')
      const own = createLocks({ redis: t.client.raw, prefix })
      try {
        const lease = await own.acquire('gone', { ttl: 5_000 })
        expect(await t.client.command('DEL', keysOf(prefix, 'gone').lock)).toBe(1)
        expect(await lease.release()).toBe(false) // the release event comes first, then the loss
      } finally {
        handle.close()
        await closeQuietly([own])
      }
      const holds = otel.spans(SPANS.hold)
      expect(holds.map((s) => [s.attributes['fencelock.lost.reason'], s.attributes['fencelock.released']])).toEqual([['refused', undefined]])
      expect(await valueOf(otel, METRICS.holdDuration, { 'fencelock.kind': 'mutex', 'fencelock.outcome': 'released' })).toBeUndefined()
      await otel.shutdown()
    })

    it('includeResourceInMetrics puts fencelock.resource on the metrics (off by default)', async () => {
      const otel = sdk()
      const handle = instrument({ meterProvider: otel.meterProvider, tracerProvider: otel.tracerProvider, includeResourceInMetrics: true })
      try {
        await cycle('per-resource')
      } finally {
        handle.close()
      }
      expect(await valueOf(otel, METRICS.acquires, { 'fencelock.kind': 'mutex', 'fencelock.outcome': 'acquired', 'fencelock.resource': 'per-resource' })).toBe(
        1,
      )
      expect(
        await valueOf(otel, METRICS.holdDuration, { 'fencelock.kind': 'mutex', 'fencelock.outcome': 'released', 'fencelock.resource': 'per-resource' }),
      ).toBe(1)
      await otel.shutdown()
    })

    it('a second call with the same providers records nothing twice and stops when both handles are closed; a conflicting one is refused', async () => {
      const otel = sdk()
      const providers = { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider }
      const first = instrument(providers)
      const second = instrument({ ...providers })
      try {
        expect(() => instrument({ ...providers, includeResourceInMetrics: true })).toThrow(
          expect.objectContaining({
            name: 'InvalidArgumentError',
            code: 'INVALID_ARGUMENT',
            message: expect.stringContaining('includeResourceInMetrics: false, got true'),
          }),
        )
        await cycle('twice')
        expect(otel.spans()).toHaveLength(2)
        expect(await valueOf(otel, METRICS.acquires, { 'fencelock.kind': 'mutex', 'fencelock.outcome': 'acquired' })).toBe(1)
        first.close()
        first.close() // closing one handle twice must not close the other's share
        expect(subscribed()).toEqual([true, true, true, true])
        await cycle('twice')
        expect(otel.spans()).toHaveLength(4)
      } finally {
        second[Symbol.dispose]()
      }
      expect(subscribed()).toEqual([false, false, false, false])
      await cycle('twice')
      expect(otel.spans()).toHaveLength(4)
      await otel.shutdown()
    })

    it('loads no library code: src/otel imports only @opentelemetry/api, node built-ins, its own files, library types, the import-free message helpers and error classes', () => {
      const dir = new URL('../../src/otel/', import.meta.url)
      const imports = readdirSync(dir).flatMap((file) =>
        [...readFileSync(new URL(file, dir), 'utf8').matchAll(/^(?:import|export)\s+(type\s+)?[^'"]*?from\s+'([^']+)'/gm)].map((m) => ({
          file,
          type: m[1] !== undefined,
          from: m[2]!,
        })),
      )
      expect(imports.length).toBeGreaterThan(5)
      // The value formatter, the unknown-option check and the error classes are shared with the
      // library: they import nothing, so they bring no library code (or state) along, and a bad
      // option is the same InvalidArgumentError (one class for `instanceof`) wherever it is thrown.
      const shared = ['../errors/describe-value.js', '../util/unknown-option.js', '../errors/errors.js']
      for (const file of shared) expect(readFileSync(new URL(file.replace(/\.js$/, '.ts'), dir), 'utf8')).not.toMatch(/^\s*(import|export)\b[^\n]*\bfrom\b/m)
      const allowed = (i: { type: boolean; from: string }) =>
        i.from === '@opentelemetry/api' ||
        i.from.startsWith('node:') ||
        i.from.startsWith('./') ||
        (i.type && i.from.startsWith('../')) ||
        shared.includes(i.from)
      expect(imports.filter((i) => !allowed(i))).toEqual([])
    })

    it('bad options: InvalidArgumentError naming the value', () => {
      const bad: [unknown, string][] = [
        [5, 'Expected `options` to be an object, got 5'],
        [null, 'Expected `options` to be an object, got null'],
        [
          { meterprovider: {} },
          'Unknown option `meterprovider` in the instrument options: did you mean `meterProvider`? (the options are tracerProvider, meterProvider, includeResourceInMetrics)',
        ],
        [{ tracerprovidr: {} }, 'Unknown option `tracerprovidr` in the instrument options: did you mean `tracerProvider`?'],
        [{ tracerProvider: {} }, 'Expected `tracerProvider` to be an OpenTelemetry TracerProvider (an object with getTracer()), got {}'],
        [
          { tracerProvider: { getTracr: 1 } },
          'Expected `tracerProvider` to be an OpenTelemetry TracerProvider (an object with getTracer()), got {"getTracr":1}',
        ],
        [
          { meterProvider: new BasicTracerProvider() },
          'Expected `meterProvider` to be an OpenTelemetry MeterProvider (an object with getMeter()), got a BasicTracerProvider',
        ],
        [{ tracerProvider: 'global' }, 'Expected `tracerProvider` to be an OpenTelemetry TracerProvider (an object with getTracer()), got "global"'],
        [{ includeResourceInMetrics: 'yes' }, 'Expected `includeResourceInMetrics` to be a boolean, got "yes"'],
      ]
      for (const [options, message] of bad) {
        let error: unknown
        try {
          instrument(options as never)
        } catch (e) {
          error = e
        }
        expect(error, String(message)).toBeInstanceOf(InvalidArgumentError)
        expect(error).toBeInstanceOf(FencelockError)
        expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', name: 'InvalidArgumentError' })
        expect((error as Error).message.startsWith(message), (error as Error).message).toBe(true)
      }
      expect(subscribed()).toEqual([false, false, false, false]) // nothing left subscribed by a refused call
    })

    it('a provider that throws never reaches the code that locks: the error goes to the OpenTelemetry diag logger', async () => {
      const logged: unknown[][] = []
      const log = (...args: unknown[]) => logged.push(args)
      diag.setLogger({ error: log, warn: log, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN)
      const otel = sdk()
      const handle = instrument({
        tracerProvider: otel.tracerProvider,
        meterProvider: {
          getMeter: () => {
            throw new Error('meter boom')
          },
        },
      })
      try {
        await cycle('boom')
      } finally {
        handle.close()
        diag.disable()
      }
      expect(otel.spans().map((s) => s.name)).toEqual([SPANS.wait, SPANS.hold]) // the spans were made before the metrics failed
      expect(logged.map((args) => args[0])).toEqual([
        'fencelock/otel: could not record a fencelock:acquire event',
        'fencelock/otel: could not record a fencelock:release event',
      ])
      expect(logged[0]![1]).toMatchObject({ message: 'meter boom' })
      await otel.shutdown()
    })
  })
})

/**
 * An uncontended acquire's `fencelock.attempts` (1) and `fencelock.contended` (false), for each
 * that the library publishes (older versions publish neither).
 */
function reportedByLibrary(span: ReadableSpan): Attributes {
  const extra: Attributes = {}
  if (span.attributes['fencelock.attempts'] !== undefined) extra['fencelock.attempts'] = 1
  if (span.attributes['fencelock.contended'] !== undefined) extra['fencelock.contended'] = false
  return extra
}
