// The per-client set-up of the suites, written once: a redis-server of the suite's own, then the
// same tests once per client adapter, each with a connected client and locks instances on it.
//
//   describeRedis('semaphore', (server) => {
//     perAdapter(server, (t) => {
//       it('...', async () => { await t.locks.acquire('r') })
//     }, { prefix: 'sem' })
//   })
//
// The other servers a suite may want come the same way: useRedis (one more server, or one per
// adapter), useCluster, useReplicated (a primary and its replica), useFaultProxy in front of a
// server, useIoredis for a plain client beside fencelock, useFlushedClient for scripts run
// directly on an emptied database. The hooks are vitest's beforeAll/afterAll of the describe they
// are called in, so what they make is there inside the tests (read through the getters) and gone
// after the suite, the last made first.
import { Redis } from 'ioredis'
import { afterAll, beforeAll, beforeEach, describe } from 'vitest'
import { createLocks, type Locks, type LocksOptions } from '../src/index.js'
import { adapters, type ClientAdapter, type TestClient } from './clients.js'
import { startFaultProxy, type FaultProxy } from './fault-proxy.js'
import {
  mature,
  requireRedisOrSkip,
  startCluster,
  startRedis,
  startReplicated,
  type RedisCluster,
  type RedisProcess,
  type ReplicatedPair,
} from './redis-server.js'
import { closeQuietly, uniquePrefix } from './util.js'

/** Where a suite's clients connect: read when they connect (in beforeAll), not when it is declared. */
export interface Target {
  readonly url: string
}

export interface Server extends Target {
  readonly redis: RedisProcess
}

export type InstanceOptions = Omit<LocksOptions, 'redis'>

export interface PerAdapter {
  readonly adapter: ClientAdapter
  /** Connected before the suite's tests, closed after them. */
  readonly client: TestClient
  /** This adapter's suite's own prefix (no other suite, or earlier run on the server, shares it). */
  readonly prefix: string
  /** `createLocks` on `client` with `prefix` and the suite's `locks` options; made when first read. */
  readonly locks: Locks
  /** A second instance like `locks` (another process, as Redis can tell); made when first read. */
  readonly other: Locks
  /** One more instance on `client` (`prefix` unless `options` name one), closed with the suite. */
  open(options?: InstanceOptions): Locks
}

export interface PerAdapterOptions {
  /** The title of each adapter's describe. Default: '$name'. */
  title?: string
  /** The base of the suite's unique prefix. Default: 'test'. */
  prefix?: string
  /** Options of `locks` and `other` besides `redis` and `prefix`. */
  locks?: Omit<InstanceOptions, 'prefix'>
  /**
   * How the client ends: 'quit' (default) waits for its replies; 'disconnect' drops it at once,
   * for suites that may leave a server paused, gone or behind a faulty proxy.
   */
  end?: 'quit' | 'disconnect'
}

function made<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} is made in beforeAll: read it inside a test or a hook`)
  return value
}

/** One redis-server for the enclosing describe: started before its tests, stopped after them. */
export function useRedis(options: { args?: string[] } = {}): Server {
  let redis: RedisProcess | undefined
  beforeAll(async () => {
    redis = await startRedis(options)
  })
  afterAll(() => redis?.stop())
  return {
    get redis() {
      return made(redis, 'the redis-server')
    },
    get url() {
      return made(redis, 'the redis-server').url
    },
  }
}

/**
 * A fault proxy in front of `server` for the enclosing describe (started after the server, closed
 * before it). What it returns stands for the proxy once started: read it inside tests and hooks.
 */
export function useFaultProxy(server: Server): FaultProxy {
  let proxy: FaultProxy | undefined
  beforeAll(async () => {
    proxy = await startFaultProxy(server.redis)
  })
  afterAll(() => proxy?.close())
  // The proxy's methods are closures (no `this`), so reading them off the started one is enough.
  return new Proxy({} as FaultProxy, { get: (_, key) => Reflect.get(made(proxy, 'the fault proxy'), key) })
}

/**
 * A local Redis Cluster for the enclosing describe (`startCluster`'s options). What it returns
 * stands for the cluster once started: read it inside tests and hooks.
 */
export function useCluster(options?: { masters?: number; replicas?: number }): RedisCluster {
  let cluster: RedisCluster | undefined
  beforeAll(async () => {
    cluster = await startCluster(options)
  })
  afterAll(() => cluster?.stop())
  // Like the fault proxy's, the cluster's methods are closures over it (no `this`).
  return new Proxy({} as RedisCluster, { get: (_, key) => Reflect.get(made(cluster, 'the cluster'), key) })
}

/**
 * A primary and a replica of it (`startReplicated`) for the enclosing describe, for suites that
 * run with `replicas` (WAIT). What it returns stands for the pair once linked: read it inside
 * tests and hooks.
 */
export function useReplicated(): ReplicatedPair {
  let pair: ReplicatedPair | undefined
  beforeAll(async () => {
    pair = await startReplicated()
  })
  afterAll(() => pair?.stop())
  return new Proxy({} as ReplicatedPair, { get: (_, key) => Reflect.get(made(pair, 'the replicated pair'), key) })
}

/** Three independent masters for the suites that run in quorum mode. */
export interface MatureQuorum {
  /** Started, and up for the suite's `maxTtl`, before its tests. */
  readonly nodes: readonly RedisProcess[]
}

/**
 * Three redis-servers for the enclosing describe, up for `maxTtl` before its tests (a quorum does
 * not count a node restarted within `maxTtl`), stopped after them.
 */
export function useMatureQuorum(maxTtl: number): MatureQuorum {
  let nodes: RedisProcess[] | undefined
  beforeAll(async () => {
    nodes = await Promise.all([0, 1, 2].map(() => startRedis()))
    await mature(nodes, maxTtl)
  })
  afterAll(() => Promise.all((nodes ?? []).map((n) => n.stop())))
  return {
    get nodes() {
      return made(nodes, 'the quorum')
    },
  }
}

/**
 * Instances in quorum mode on `quorum`'s nodes for the enclosing describe: each call connects one
 * client of `adapter` per node and makes `createLocks` over them with `prefix`, `maxTtl` as its
 * ttl and maxTtl and 200 ms per node; the clients quit after the describe.
 */
export function useQuorumInstances(adapter: ClientAdapter, quorum: MatureQuorum, maxTtl: number): (prefix: string) => Promise<Locks> {
  let clients: TestClient[] = []
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.quit()))
    clients = []
  })
  return async (prefix) => {
    const own = await Promise.all(quorum.nodes.map((n) => adapter.connect(n.url)))
    clients.push(...own)
    return createLocks({ redis: own.map((c) => c.raw), prefix, maxTtl, ttl: maxTtl, quorum: { nodeTimeout: 200 } })
  }
}

/** `describe(title)` with a quorum of its own (`useMatureQuorum`), its tests once per client adapter, each with `useQuorumInstances`. */
export function quorumPerAdapter(title: string, maxTtl: number, body: (open: (prefix: string) => Promise<Locks>, quorum: MatureQuorum) => void): void {
  describe(title, () => {
    const quorum = useMatureQuorum(maxTtl)
    describe.each(adapters)('$name', (adapter) => body(useQuorumInstances(adapter, quorum, maxTtl), quorum))
  })
}

/**
 * A plain ioredis client (its default options) on `target` for the enclosing describe, for what a
 * test does beside fencelock: a bank's balances, a script run on its own, a count of permits.
 */
export function useIoredis(target: Target): { readonly client: Redis } {
  let client: Redis | undefined
  beforeAll(() => {
    client = new Redis(target.url)
  })
  afterAll(() => client?.disconnect())
  return {
    get client() {
      return made(client, 'the ioredis client')
    },
  }
}

/**
 * A client of the first adapter on `target` for the enclosing describe, for suites that run
 * scripts and commands directly on a database of their own: it is emptied (FLUSHALL) before each
 * test. What it returns stands for the client once connected: read it inside tests and hooks.
 */
export function useFlushedClient(target: Target): TestClient {
  let client: TestClient | undefined
  beforeAll(async () => {
    client = await adapters[0]!.connect(target.url)
  })
  afterAll(() => client?.quit())
  beforeEach(async () => {
    await made(client, 'the client').command('FLUSHALL')
  })
  // A TestClient's methods are closures over its library's client (no `this`), as the proxy's are.
  return new Proxy({} as TestClient, { get: (_, key) => Reflect.get(made(client, 'the client'), key) })
}

/** `describe(title)` with a redis-server of its own; skipped where redis-server is not installed. */
export function describeRedis(title: string, body: (server: Server) => void, options?: { args?: string[] }): void {
  describe.skipIf(!requireRedisOrSkip())(title, () => body(useRedis(options)))
}

/** One client of `adapter` connected to `target`, and the locks instances on it, for the enclosing describe. */
export function useClient(adapter: ClientAdapter, target: Target, options: PerAdapterOptions = {}): PerAdapter {
  const prefix = uniquePrefix(options.prefix ?? 'test')
  const instances: Locks[] = []
  let client: TestClient | undefined
  let locks: Locks | undefined
  let other: Locks | undefined
  beforeAll(async () => {
    client = await adapter.connect(target.url)
  })
  afterAll(async () => {
    await closeQuietly(instances)
    await (options.end === 'disconnect' ? client?.disconnect() : client?.quit())
  })
  const open = (more: InstanceOptions = {}): Locks => {
    const instance = createLocks({ redis: made(client, 'the client').raw, prefix, ...more })
    instances.push(instance)
    return instance
  }
  return {
    adapter,
    prefix,
    get client() {
      return made(client, 'the client')
    },
    get locks() {
      return (locks ??= open(options.locks))
    },
    get other() {
      return (other ??= open(options.locks))
    },
    open,
  }
}

/** The same tests once per client adapter (`describe.each(adapters)`), each with `useClient`'s set-up. */
export function perAdapter(target: Target, body: (t: PerAdapter) => void, options: PerAdapterOptions = {}): void {
  describe.each(adapters)(options.title ?? '$name', (adapter) => body(useClient(adapter, target, options)))
}
