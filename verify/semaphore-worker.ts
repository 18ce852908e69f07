// One semaphore worker process: takes a permit of the run's semaphore and does units of protected
// work under it, using only fencelock's public API, through the fault proxies. Every step is one
// JSON line on stdout, timed by CLOCK_MONOTONIC (the same clock in every process), so that the
// checker can count how many holders were inside at once.
import { Redis } from 'ioredis'
import { createLocks, type Lease, type LockLostError, type Locks } from '../src/index.js'
import type { WorkerConfig } from './config.js'
import { workerName } from './config.js'
import { monotonicNow, type LostEvent, type OpEvent, type OpName, type OpType } from './history.js'
import { rng } from './rng.js'

const config = JSON.parse(process.argv[2] ?? '') as WorkerConfig
if (!config.semaphore) throw new Error('semaphore-worker: no semaphore section in the worker config')
const sem = config.semaphore
const worker = workerName(config.slot)
const random = rng(config.seed * 7919 + config.slot * 131 + config.generation)
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
// A lease's deadline is on this process's performance.now(); the history's clock is CLOCK_MONOTONIC.
// They do not even tick at the same rate (performance.now() was measured ~280 ppm slow here), so a
// deadline is converted when it is recorded, from the time it has left, and the worker then checks
// the recorded value: exactly what the checker sees.
const now = monotonicNow
const toHistory = (perfMs: number): number => now() + (perfMs - performance.now())

function emit(event: OpEvent | LostEvent): void {
  process.stdout.write(JSON.stringify(event) + '\n')
}

function op(type: OpType, f: OpName, resource: string, extra: Partial<OpEvent> = {}, time = now()): void {
  emit({ kind: 'op', type, f, worker, pid: process.pid, resource, time, ...extra })
}

const codeOf = (err: unknown): string => {
  const e = err as { code?: unknown; name?: unknown; message?: unknown }
  const code = typeof e?.code === 'string' ? e.code : typeof e?.name === 'string' ? e.name : 'Error'
  return `${code}: ${String(e?.message ?? err).slice(0, 160)}`
}

const clients = config.nodes.map(
  (node) =>
    new Redis({
      host: node.host,
      port: node.port,
      // A dropped or held reply must not stall the worker forever; reconnect quickly after a reset.
      commandTimeout: Math.max(500, config.ttl),
      maxRetriesPerRequest: 2,
      retryStrategy: (times) => Math.min(25 * times, 250),
      enableAutoPipelining: false,
    }),
)
for (const client of clients) client.on('error', () => {})
const locks: Locks = config.quorum
  ? createLocks({ redis: clients, prefix: config.prefix, ttl: config.ttl, wait: config.wait, maxTtl: config.maxTtl })
  : createLocks({ redis: clients[0]!, prefix: config.prefix, ttl: config.ttl, wait: config.wait })
const resource = config.resources[0]!.name
const pool = locks.semaphore(resource, { limit: sem.limit })

async function holdPermit(): Promise<void> {
  op('invoke', 'acquire', resource)
  let permit: Lease
  try {
    permit = await pool.acquire({ ttl: config.ttl, wait: config.wait })
  } catch (err) {
    op('fail', 'acquire', resource, { error: codeOf(err) })
    await sleep(random.int(5, 50))
    return
  }
  const fence = permit.fence
  let deadline = toHistory(permit.deadline)
  const units = random.int(sem.units[0], sem.units[1])
  op('ok', 'acquire', resource, { fence, value: { deadline, token: permit.token, units } })
  const onAbort = () => {
    const reason = (permit.signal.reason as LockLostError | undefined)?.reason ?? 'unknown'
    emit({ kind: 'lost', worker, pid: process.pid, resource, fence, reason, time: now() })
  }
  if (permit.signal.aborted) onAbort()
  else permit.signal.addEventListener('abort', onAbort, { once: true })

  try {
    for (let unit = 0; unit < units; unit++) {
      const length = random.int(sem.unitMs[0], sem.unitMs[1])
      // Not enough validity left for this unit: extend first (a lost permit's extend rejects).
      if (deadline - now() < length + 50) {
        op('invoke', 'extend', resource, { fence })
        try {
          await permit.extend()
          deadline = toHistory(permit.deadline)
          op('ok', 'extend', resource, { fence, value: { deadline } })
        } catch (err) {
          op('fail', 'extend', resource, { fence, error: codeOf(err) })
        }
      }
      const t = now()
      // The check a correct holder makes before each unit of work; the control run skips it.
      if (sem.checks && (permit.signal.aborted || t >= deadline)) break
      op('invoke', 'work', resource, { fence, value: { unit, of: units } }, t)
      await sleep(length)
      op('ok', 'work', resource, { fence, value: { unit } })
    }
  } finally {
    op('invoke', 'release', resource, { fence })
    try {
      const released = await permit.release()
      op('ok', 'release', resource, { fence, value: { released } })
    } catch (err) {
      op('info', 'release', resource, { fence, error: codeOf(err) })
    }
  }
}

async function main(): Promise<void> {
  let stopping = false
  process.on('SIGTERM', () => {
    stopping = true
  })
  while (!stopping) {
    await holdPermit()
    await sleep(random.int(0, 20))
  }
  await locks.close()
  for (const client of clients) client.disconnect()
}

main().catch((err) => {
  process.stderr.write(`worker ${worker} crashed: ${String((err as Error)?.stack ?? err)}\n`)
  process.exit(1)
})
