// One soak worker process: every primitive at once (mutex, weighted semaphore, read/write,
// all-or-nothing, election) in loops on one topology with one client library, through the public
// API only. Each step is one JSON line on stdout in verify's history format; on SIGUSR2 it prints
// a sample of itself (heap after a full GC, RSS, active handles and timers). SIGTERM stops it.
import { AsyncLocalStorage } from 'node:async_hooks'
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { Cluster, Redis } from 'ioredis'
import { createClient, createCluster, createSentinel } from 'redis'
import { createLocks, type Lease, type LockLostError, type RedisClient } from '../src/index.js'
import { clockOrigin, now, type OpName, type OpType } from './history.js'
import { rng } from './rng.js'
import type { SoakWorkerConfig } from './soak-types.js'
import { codeOf, sleep } from './worker-kit.js'

const config = JSON.parse(process.argv[2]!) as SoakWorkerConfig
const worker = `w${config.slot}`
const random = rng(config.seed * 1_000 + config.slot)
const emit = (event: object) => process.stdout.write(`${JSON.stringify(event)}\n`)
/**
 * Each primitive's loop is a process of its own to the checkers (verify's checkers pair an
 * acquire's invoke and its reply by pid): the pid times 10 plus the loop's index.
 */
const loopPid = new AsyncLocalStorage<number>()
const pid = () => loopPid.getStore() ?? process.pid * 10
const op = (type: OpType, f: OpName, resource: string, extra: object = {}) => emit({ kind: 'op', type, f, worker, pid: pid(), resource, time: now(), ...extra })

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/**
 * On SIGUSR2 (before anything else, so that an early one cannot kill the process): the heap after
 * a full GC, RSS, and the floor of five readings of the active handles and timers, 100 ms apart
 * (what persists, not what a wait in flight holds at one instant).
 */
process.on('SIGUSR2', async () => {
  gc()
  const { heapUsed, heapTotal, external, arrayBuffers, rss } = process.memoryUsage()
  let handles = Number.POSITIVE_INFINITY
  let timers = Number.POSITIVE_INFINITY
  let allTimers = Number.POSITIVE_INFINITY
  for (let i = 0; i < 5; i++) {
    if (i > 0) await sleep(100)
    const resources = process.getActiveResourcesInfo()
    const timeouts = resources.filter((r) => r === 'Timeout').length
    allTimers = Math.min(allTimers, timeouts)
    timers = Math.min(timers, timeouts - napping)
    handles = Math.min(handles, resources.length - timeouts)
  }
  const stats = getHeapSpaceStatistics()
  const spaces = Object.fromEntries(stats.map((s) => [s.space_name, s.space_size]))
  const spacesUsed = Object.fromEntries(stats.map((s) => [s.space_name, s.space_used_size]))
  emit({
    kind: 'sample',
    worker,
    pid: process.pid,
    time: now(),
    heapUsed,
    heapTotal,
    external,
    arrayBuffers,
    rss,
    handles,
    timers,
    allTimers,
    spaces,
    spacesUsed,
  })
})

/**
 * The loops' own pauses (a hold, the idle time between steps) are timers too, one per loop that
 * is pausing: counted here so that a sample's `timers` is what the library and the clients keep.
 */
let napping = 0
async function nap(ms: number): Promise<void> {
  napping++
  try {
    await sleep(ms)
  } finally {
    napping--
  }
}

/** The user's client(s) for this worker's topology and library, named so that Redis can tell its connections apart. */
function connect(): { redis: RedisClient | RedisClient[]; close: () => void; ready: Promise<unknown> } {
  const name = `soak-${worker}`
  const [first] = config.nodes
  const retry = { retryStrategy: (times: number) => Math.min(25 * times, 250), connectionName: name }
  const socket = { reconnectStrategy: (retries: number) => Math.min(25 * (retries + 1), 250), connectTimeout: 1_000 }
  if (config.client === 'ioredis') {
    const made =
      config.topology === 'cluster'
        ? [new Cluster([first!], { redisOptions: retry })]
        : config.topology === 'single'
          ? [new Redis({ sentinels: config.sentinels!, name: config.sentinelName!, ...retry })]
          : config.nodes.map((n) => new Redis({ ...n, ...retry }))
    for (const c of made) c.on('error', () => {})
    return { redis: made.length === 1 ? made[0]! : made, close: () => made.forEach((c) => c.disconnect()), ready: Promise.resolve() }
  }
  const made =
    config.topology === 'cluster'
      ? [createCluster({ rootNodes: [{ url: `redis://${first!.host}:${first!.port}` }], defaults: { name, socket } })]
      : config.topology === 'single'
        ? [createSentinel({ name: config.sentinelName!, sentinelRootNodes: config.sentinels!, nodeClientOptions: { name, socket } })]
        : config.nodes.map((n) => createClient({ url: `redis://${n.host}:${n.port}`, name, socket }))
  for (const c of made) c.on('error', () => {})
  const ready = Promise.all(made.map((c) => (c as { connect(): Promise<unknown> }).connect()))
  return { redis: (made.length === 1 ? made[0] : made) as RedisClient, close: () => made.forEach((c) => void c.destroy()), ready }
}

const clients = connect()
await clients.ready
const locks = createLocks({
  redis: clients.redis,
  prefix: 'soak:',
  ttl: config.ttl,
  wait: config.wait,
  ...(config.topology === 'quorum' ? { maxTtl: config.ttl * 2 } : {}),
  ...(config.topology === 'single' ? { replicas: { count: 1, timeout: 500 } } : {}),
})
let stopping = false

/** The acquire's outcome and how long it waited, recorded for each of `parts`, its abort as a `lost` event. */
async function acquired(resource: string, get: () => Promise<Lease>, extra: object = {}, parts: readonly string[] = [resource]): Promise<Lease | undefined> {
  op('invoke', 'acquire', resource, extra)
  const asked = performance.now()
  try {
    const lease = await get()
    const waited = performance.now() - asked
    for (const part of parts) op('ok', 'acquire', part, { fence: fenceOf(lease, part), value: { deadline: clockOrigin + lease.deadline, waited, ...extra } })
    const owner = pid()
    const onAbort = () => {
      const reason = (lease.signal.reason as LockLostError | undefined)?.reason ?? 'unknown'
      for (const part of parts) emit({ kind: 'lost', worker, pid: owner, resource: part, fence: fenceOf(lease, part), reason, time: now() })
    }
    if (lease.signal.aborted) onAbort()
    else lease.signal.addEventListener('abort', onAbort, { once: true })
    return lease
  } catch (err) {
    op('fail', 'acquire', resource, { error: codeOf(err), value: { waited: performance.now() - asked, ...extra } })
    return undefined
  }
}

/** Holds `lease` for a short while, then releases it (recorded per resource it covers). */
async function holdAndRelease(lease: Lease, resources: readonly string[], holdMs: [number, number]): Promise<void> {
  await nap(random.int(...holdMs))
  for (const r of resources) op('invoke', 'release', r, { fence: fenceOf(lease, r) })
  try {
    const released = await lease.release()
    for (const r of resources) op('ok', 'release', r, { fence: fenceOf(lease, r), value: { released } })
  } catch (err) {
    for (const r of resources) op('info', 'release', r, { fence: fenceOf(lease, r), error: codeOf(err) })
  }
}

const fenceOf = (lease: Lease, resource: string): number => (lease as { fences?: Record<string, number> }).fences?.[resource] ?? lease.fence

/** One step of each primitive; each loop runs its step until SIGTERM. */
const steps: (() => Promise<void>)[] = [
  async () => {
    const resource = `${config.topology}:m${random.int(0, 1)}`
    const lease = await acquired(resource, () => locks.acquire(resource))
    if (lease) await holdAndRelease(lease, [resource], [5, 40])
  },
  async () => {
    const resource = `${config.topology}:sem`
    const permits = random.int(1, 2)
    const lease = await acquired(resource, () => locks.semaphore(resource, { limit: 3 }).acquire({ permits }), { permits })
    if (lease) await holdAndRelease(lease, [resource], [5, 40])
  },
  async () => {
    const resource = `${config.topology}:rw`
    const mode = random.next() < 0.25 ? 'write' : 'read'
    const rw = locks.readWrite(resource)
    const lease = await acquired(resource, () => (mode === 'write' ? rw.write() : rw.read()), { mode })
    if (lease) await holdAndRelease(lease, [resource], [5, 40])
  },
  async () => {
    const pair = random.next() < 0.5 ? ['a', 'b'] : ['b', 'a']
    const resources = pair.map((x) => `${config.topology}:acct-${x}`)
    const lease = await acquired(resources.join('+'), () => locks.acquireAll(resources), {}, resources)
    if (lease) await holdAndRelease(lease, resources, [5, 40])
  },
  async () => {
    const resource = `${config.topology}:leader`
    const term = await acquired(resource, () => locks.election(resource).campaign(worker))
    if (!term) return
    await nap(random.int(50, 300))
    op('invoke', 'release', resource, { fence: term.fence })
    const resigned = await (term as Lease & { resign(): Promise<boolean> }).resign().catch((err: unknown) => codeOf(err))
    op(typeof resigned === 'boolean' ? 'ok' : 'info', 'release', resource, { fence: term.fence, value: { released: resigned } })
  },
]

async function loop(step: () => Promise<void>): Promise<void> {
  while (!stopping) {
    await step().catch((err: unknown) => emit({ kind: 'meta', what: 'error', name: worker, time: now(), detail: codeOf(err) }))
    await nap(random.int(...config.idle))
  }
}

process.on('SIGTERM', () => {
  stopping = true
  void locks.close().finally(() => {
    clients.close()
    process.exit(0)
  })
})

await Promise.all(steps.map((step, i) => loopPid.run(process.pid * 10 + i, () => loop(step))))
