// @ts-nocheck: a prelude of test/package/docs-snippets.test.ts, checked and run with its block in place of "// @snippet"
// Around docs/otel.md's "providers of your own" block: SDK providers that are not registered.
import { MeterProvider } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base'
import { instrument } from 'fencelock/otel'

const tracerProvider = new BasicTracerProvider()
const meterProvider = new MeterProvider()
// @snippet
otel.close()
await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()])
