// fencelock metrics in Prometheus' text format with prom-client, served on /metrics.
//
//   npx tsx examples/prometheus.ts              (REDIS_URL=redis://host:6379 for your own Redis,
//   curl http://127.0.0.1:9464/metrics           otherwise a throwaway redis-server from PATH; PORT)
//
// The part to copy is fencelockMetrics(): it subscribes to fencelock's diagnostics_channel events
// (no OpenTelemetry needed) and keeps six metrics in a prom-client registry. The rest is a small
// workload so that there is something to see: three workers take turns on one lock (some time out),
// and once a second a slow job overruns its lease, which expires; its late write is then refused by
// the fence.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { randomBytes } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Redis } from 'ioredis'
import { Counter, Histogram, Registry } from 'prom-client'
// Inside this repository the examples run from source; in your project: from 'fencelock'.
import { createLocks, fencedSet, LockTimeoutError, telemetry } from '../src/index.js'
import { hasRedisServer, INSTALL_HINT, startLocalRedis, type LocalRedis } from './local-redis.js'

/**
 * Registers fencelock's metrics in `registry` and keeps them up to date from fencelock's events,
 * for every locks instance in the process. Returns a function that stops updating them.
 * The resource name is deliberately not a label: with ids in resource names (`account:123`) every
 * id would start new time series in every metric.
 */
export function fencelockMetrics(registry: Registry): () => void {
  const registers = [registry]
  const wait = new Histogram({
    name: 'fencelock_wait_duration_seconds',
    help: 'Time spent in acquire, by outcome (acquired, timeout, aborted, error)',
    labelNames: ['kind', 'outcome'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers,
  })
  const hold = new Histogram({
    name: 'fencelock_hold_duration_seconds',
    help: 'Time a lease was held, until it was released or lost',
    labelNames: ['kind', 'outcome'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
    registers,
  })
  const acquires = new Counter({ name: 'fencelock_acquires_total', help: 'Settled acquire calls, by outcome', labelNames: ['kind', 'outcome'], registers })
  const contention = new Counter({
    name: 'fencelock_contention_total',
    help: 'Acquire calls that found the lock held and had to wait, or timed out',
    labelNames: ['kind', 'outcome'],
    registers,
  })
  const lost = new Counter({ name: 'fencelock_lost_total', help: 'Leases lost before their release, by reason', labelNames: ['kind', 'reason'], registers })
  const fencedWrites = new Counter({
    name: 'fencelock_fenced_writes_total',
    help: 'Fenced writes, accepted or refused by the fence',
    labelNames: ['accepted', 'operation'],
    registers,
  })

  type Message = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
  const listeners: [string, (m: Message) => void][] = [
    [
      telemetry.acquire.name as string,
      (m) => {
        acquires.inc({ kind: m.kind, outcome: m.outcome })
        wait.observe({ kind: m.kind, outcome: m.outcome }, m.waitedMs / 1_000)
        // `contended` and `attempts` come with newer fencelock versions; a timeout always counts.
        if (m.outcome === 'timeout' || m.contended === true || (m.contended === undefined && m.attempts > 1))
          contention.inc({ kind: m.kind, outcome: m.outcome })
      },
    ],
    // `released: false`: the lease had been lost, and the loss was counted by the lost event.
    [telemetry.release.name as string, (m) => m.released && hold.observe({ kind: m.kind, outcome: 'released' }, m.heldMs / 1_000)],
    [
      telemetry.lost.name as string,
      (m) => {
        lost.inc({ kind: m.kind, reason: m.reason })
        hold.observe({ kind: m.kind, outcome: 'lost' }, m.heldMs / 1_000)
      },
    ],
    [telemetry.fencedWrite.name as string, (m) => fencedWrites.inc({ accepted: String(m.accepted), operation: m.operation })],
  ]
  for (const [name, listener] of listeners) subscribe(name, listener as (m: unknown) => void)
  return () => {
    for (const [name, listener] of listeners) unsubscribe(name, listener as (m: unknown) => void)
  }
}

async function deleteKeys(redis: Redis, pattern: string): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
    cursor = next
    if (keys.length > 0) await redis.del(...keys)
  } while (cursor !== '0')
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

async function main(): Promise<number> {
  let local: LocalRedis | undefined
  let url = process.env.REDIS_URL
  if (!url) {
    if (!hasRedisServer()) {
      console.error(`prometheus example: ${INSTALL_HINT}`)
      return 1
    }
    local = await startLocalRedis()
    url = local.url
  }
  const registry = new Registry()
  const stopMetrics = fencelockMetrics(registry)
  const server = http.createServer((req, res) => {
    if (req.url !== '/metrics') return void res.writeHead(404).end()
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: Error) => res.writeHead(500).end(err.message),
    )
  })
  await new Promise<void>((resolve) => server.listen(Number(process.env.PORT ?? 9464), process.env.HOST ?? '127.0.0.1', resolve))
  const { address, port } = server.address() as AddressInfo
  console.log(`fencelock metrics on http://${address}:${port}/metrics (Redis: ${local ? `throwaway redis-server at ${url}` : url}); Ctrl-C stops`)

  const redis = new Redis(url, { lazyConnect: true, retryStrategy: () => null })
  redis.on('error', () => {}) // a failed connect rejects connect() below
  await redis.connect()
  const prefix = `fencelock-prometheus:${randomBytes(4).toString('hex')}:`
  const locks = createLocks({ redis, prefix })
  const data = `${prefix}report`
  let running = true
  const stopped = new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve())
  })
  void stopped.then(() => (running = false))

  const worker = async () => {
    while (running) {
      await locks
        .withLock(
          'report',
          async (lease) => {
            await fencedSet(redis, data, `written under fence ${lease.fence}`, lease.fence)
            await sleep(5 + Math.random() * 25)
          },
          { wait: 40 },
        )
        .catch((err: unknown) => {
          if (!(err instanceof LockTimeoutError)) throw err
        })
      await sleep(10)
    }
  }
  const overrunner = async () => {
    while (running) {
      const lease = await locks.acquire('report', { ttl: 200, wait: 2_000 }).catch(() => undefined)
      if (lease) {
        await sleep(300) // longer than the lease: it expires, the workers move on with larger fences
        await fencedSet(redis, data, 'late write', lease.fence) // refused by the fence
        await lease.release()
      }
      await Promise.race([sleep(1_000), stopped])
    }
  }
  await Promise.all([worker(), worker(), worker(), overrunner()])

  await locks.close()
  stopMetrics()
  await deleteKeys(redis, `*${prefix}*`) // on a shared Redis (REDIS_URL), leave nothing behind
  await redis.quit()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  await local?.stop()
  return 0
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (err: unknown) => {
    console.error(`prometheus example: ${err instanceof Error ? err.message : String(err)}`)
    process.exit(1)
  },
)
