// What every verify worker process shares: its config (argv[2]), its seeded randomness, the JSON
// lines it prints, its clients (through the fault proxies) and its locks instance, and the loop
// that runs its step until SIGTERM. A worker adds only its step (a transfer, a permit's work).
import pg from 'pg'
import { Redis } from 'ioredis'
import { createSentinel } from 'redis'
import { createLocks, fencedSet, type Locks, type RedisClient } from '../src/index.js'
import type { WorkerConfig } from './config.js'
import { workerName } from './config.js'
import { now, type LostEvent, type OpEvent, type OpName, type OpType } from './history.js'
import { rng } from './rng.js'

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const codeOf = (err: unknown): string => {
  const e = err as { code?: unknown; name?: unknown; message?: unknown }
  const code = typeof e?.code === 'string' ? e.code : typeof e?.name === 'string' ? e.name : 'Error'
  return `${code}: ${String(e?.message ?? err).slice(0, 160)}`
}

/** What a worker does with a client of its own besides locking: the control run's plain SET, and closing it. */
interface WorkerClient {
  readonly raw: RedisClient
  connect(): Promise<void>
  set(key: string, value: string): Promise<boolean>
  close(): void
}

const ioredisClient = (client: Redis): WorkerClient => {
  client.on('error', () => {})
  return {
    raw: client,
    connect: async () => {},
    set: async (key, value) => (await client.set(key, value)) === 'OK',
    close: () => client.disconnect(),
  }
}

/** Failover mode, odd slots: node-redis's own Sentinel client, which follows the promotions itself. */
function nodeRedisSentinel(sentinel: NonNullable<WorkerConfig['sentinel']>): WorkerClient {
  const reconnectStrategy = (retries: number) => Math.min(25 * (retries + 1), 250)
  const client = createSentinel({
    name: sentinel.name,
    sentinelRootNodes: sentinel.sentinels,
    nodeClientOptions: { username: sentinel.username, password: sentinel.username, socket: { connectTimeout: 1_000, reconnectStrategy } },
    sentinelClientOptions: { socket: { connectTimeout: 1_000, reconnectStrategy } },
  })
  client.on('error', () => {})
  return {
    raw: client,
    connect: async () => void (await client.connect()),
    set: async (key, value) => (await client.set(key, value)) === 'OK',
    close: () => void client.destroy(),
  }
}

/** The worker's clients: one per proxy, or (failover mode) one that follows the Sentinels to the primary. */
function connect(config: WorkerConfig): WorkerClient[] {
  const common = {
    // A dropped or held reply must not stall the worker forever; reconnect quickly after a reset.
    // Failover mode: a paused primary holds every reply; a second is enough to give up on it.
    commandTimeout: config.sentinel ? 1_000 : Math.max(500, config.ttl),
    maxRetriesPerRequest: 2,
    retryStrategy: (times: number) => Math.min(25 * times, 250),
    enableAutoPipelining: false,
  }
  if (config.sentinel?.client === 'node-redis') return [nodeRedisSentinel(config.sentinel)]
  if (config.sentinel) {
    // A deposed primary told to replicate answers writes with READONLY: ask the Sentinels again.
    const reconnectOnError = (err: Error) => (err.message.startsWith('READONLY') ? 2 : false)
    const sentinelRetryStrategy = (times: number) => Math.min(25 * times, 250)
    return [
      ioredisClient(
        new Redis({
          ...common,
          sentinels: config.sentinel.sentinels,
          name: config.sentinel.name,
          username: config.sentinel.username,
          password: config.sentinel.username,
          reconnectOnError,
          sentinelRetryStrategy,
        }),
      ),
    ]
  }
  return config.nodes.map((node) => ioredisClient(new Redis({ ...common, host: node.host, port: node.port })))
}

/** `clock` times the history (the mutex and transfer modes: `now`; the semaphore mode: CLOCK_MONOTONIC). */
export function workerKit(clock: () => number = now) {
  const config = JSON.parse(process.argv[2] ?? '') as WorkerConfig
  const worker = workerName(config.slot)
  const random = rng(config.seed * 7919 + config.slot * 131 + config.generation)
  const emit = (event: OpEvent | LostEvent): void => void process.stdout.write(`${JSON.stringify(event)}\n`)
  const op = (type: OpType, f: OpName, resource: string, extra: Partial<OpEvent> = {}, time = clock()): void =>
    emit({ kind: 'op', type, f, worker, pid: process.pid, resource, time, ...extra })
  const clients = connect(config)
  const stateClient = clients[0]!
  const retention = config.fenceRetention === undefined ? {} : { fenceRetention: config.fenceRetention }
  const locks: Locks = config.quorum
    ? createLocks({ redis: clients.map((c) => c.raw), prefix: config.prefix, ttl: config.ttl, wait: config.wait, maxTtl: config.maxTtl, ...retention })
    : createLocks({
        redis: stateClient.raw,
        prefix: config.prefix,
        ttl: config.ttl,
        wait: config.wait,
        ...retention,
        ...(config.replicas ? { replicas: config.replicas } : {}),
        ...(config.waiterGrace !== undefined ? { waiterGrace: config.waiterGrace } : {}),
      })

  /** Runs `step` until SIGTERM (with a short random pause between steps), then closes everything. */
  const runUntilTerm = (step: () => Promise<void>, hooks: { start?: () => Promise<void>; end?: () => Promise<void> } = {}): void => {
    const main = async () => {
      for (const client of clients) await client.connect()
      await hooks.start?.()
      let stopping = false
      process.on('SIGTERM', () => {
        stopping = true
      })
      while (!stopping) {
        await step()
        await sleep(random.int(0, 20))
      }
      await locks.close()
      await hooks.end?.()
      for (const client of clients) client.close()
    }
    main().catch((err) => {
      process.stderr.write(`worker ${worker} crashed: ${String((err as Error)?.stack ?? err)}\n`)
      process.exit(1)
    })
  }

  return { config, worker, random, emit, op, clients, stateClient, locks, runUntilTerm }
}

/** The bank of the mutex and transfer modes: a PostgreSQL client and the run's tables. */
export function bank(config: WorkerConfig) {
  const db = new pg.Client(config.pg)
  db.on('error', () => {})
  return { db, table: `${config.schema}.accounts`, ledger: `${config.schema}.ledger` }
}

/**
 * A bank worker's step: `transfer`, and a PostgreSQL failure outside a transaction (claim, read)
 * recorded as an info event before going on.
 */
export function bankStep(kit: ReturnType<typeof workerKit>, db: pg.Client, transfer: () => Promise<void>): () => Promise<void> {
  return async () => {
    try {
      await transfer()
    } catch (err) {
      kit.op('info', 'read', 'unknown', { error: codeOf(err) })
      await db.query('ROLLBACK').catch(() => {})
      await sleep(50)
    }
  }
}

/**
 * The Redis-side resource of a committed write: `resource`'s last-writer record, guarded by
 * fencedSet when fencing is on (a plain SET in the control run).
 */
export async function setLastWriter(kit: ReturnType<typeof workerKit>, resource: string, fence: number): Promise<void> {
  const { config, worker, op, stateClient } = kit
  const key = `verify:{${resource}}:last`
  const value = JSON.stringify({ worker, fence })
  op('invoke', 'fset', resource, { fence })
  try {
    const accepted = config.fencing ? await fencedSet(stateClient.raw, key, value, fence) : await stateClient.set(key, value)
    op(accepted ? 'ok' : 'fail', 'fset', resource, { fence, ...(accepted ? {} : { error: 'stale' }) })
  } catch (err) {
    op('info', 'fset', resource, { fence, error: codeOf(err) })
  }
}
