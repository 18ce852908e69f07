// Clients for the connection the command line describes: one node, a quorum of independent nodes
// (several --redis), or a Redis Cluster (--cluster); ioredis or node-redis; TLS and ACL user.
// The client libraries are loaded at run time: they are optional peers of fencelock, and a missing
// one is reported with what to install.
import { readFileSync } from 'node:fs'
import type { RedisClient } from '../index.js'
import type { Connection } from './command.js'
import { handshake, scanWithin, SLOTS_TIMEOUT_MS, TCP_TIMEOUT_MS } from './deadlines.js'
import { Exit, isPermissionError, Status, within } from './exit.js'
import type { ScanNode } from './scan.js'
import { redact, type ClientName } from './values.js'

/** The connected clients, and what the CLI needs besides `createLocks`. */
export interface Connected {
  readonly client: ClientName
  /** What `createLocks({ redis })` takes: one client, or one per node of a quorum. */
  readonly redis: RedisClient | RedisClient[]
  /** The nodes to SCAN: every node of a quorum, every master of a cluster. */
  scanNodes(): Promise<ScanNode[]>
  close(): Promise<void>
}

// Variables, not literals: bundlers would otherwise copy the clients into dist/cli.js.
const MODULES: Record<ClientName, string> = { ioredis: 'ioredis', 'node-redis': 'redis' }

async function load(name: ClientName): Promise<unknown> {
  try {
    return await import(MODULES[name])
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw err
    return undefined
  }
}

/** The client library: --client, else ioredis if installed, else node-redis. */
async function library(wanted: ClientName | undefined): Promise<{ name: ClientName; mod: any }> {
  for (const name of wanted ? [wanted] : (['ioredis', 'node-redis'] as const)) {
    const mod = await load(name)
    if (mod) return { name, mod }
  }
  throw new Exit(
    Status.USAGE,
    wanted
      ? `--client ${wanted}: the ${MODULES[wanted]} package is not installed: run \`npm install ${MODULES[wanted]}\``
      : 'the CLI talks to Redis through ioredis or node-redis, and neither is installed: run `npm install ioredis` (or `npm install redis`)',
  )
}

/** Host, port, database and credentials of one URL; the URL's user and password win over --user and REDIS_PASSWORD. */
interface Endpoint {
  url: string
  host: string
  port: number
  db: number
  tls: boolean
}

function endpoint(url: string): Endpoint {
  const u = new URL(url)
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0
  if (!Number.isInteger(db) || db < 0) throw new Exit(2, `Invalid --redis value ${JSON.stringify(redact(url))}: the path must be a database number, such as /0`)
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname
  return { url, host, port: u.port ? Number(u.port) : 6379, db, tls: u.protocol === 'rediss:' }
}

function credentials(url: string, connection: Connection, env: NodeJS.ProcessEnv): { username?: string; password?: string } {
  const u = new URL(url)
  const username = u.username ? decodeURIComponent(u.username) : connection.user
  const password = u.password ? decodeURIComponent(u.password) : env.REDIS_PASSWORD || undefined
  return { ...(username !== undefined && { username }), ...(password !== undefined && { password }) }
}

function tlsOptions(connection: Connection): { ca?: Buffer; cert?: Buffer; key?: Buffer } {
  const read = (file: string | undefined, flag: string) => {
    if (file === undefined) return undefined
    try {
      return readFileSync(file)
    } catch (err) {
      throw new Exit(2, `Invalid ${flag} value ${JSON.stringify(file)}: ${(err as Error).message}`, { cause: err })
    }
  }
  const ca = read(connection.tls.ca, '--tls-ca')
  const cert = read(connection.tls.cert, '--tls-cert')
  const key = read(connection.tls.key, '--tls-key')
  return { ...(ca && { ca }), ...(cert && { cert }), ...(key && { key }) }
}

/** Connects as the command line says, or throws Exit (69, or 77 if refused) naming the (redacted) URL that failed. */
export async function connect(connection: Connection, env: NodeJS.ProcessEnv = process.env): Promise<Connected> {
  const { name, mod } = await library(connection.client)
  const tls = tlsOptions(connection)
  const useTls = (e: Endpoint) => e.tls || Object.keys(tls).length > 0
  const endpoints = connection.redis.map(endpoint)
  if (connection.cluster) {
    if (endpoints.some((e) => e.db !== 0)) throw new Exit(2, 'Redis Cluster has only database 0: drop the /<db> from the --redis URLs')
    return name === 'ioredis' ? ioredisCluster(mod, endpoints, connection, env, tls, useTls) : nodeRedisCluster(mod, endpoints, connection, env, tls, useTls)
  }
  const open = (e: Endpoint) => (name === 'ioredis' ? ioredisClient(mod, e, credentials(e.url, connection, env), useTls(e) ? tls : undefined) : nodeRedisClient(mod, e, credentials(e.url, connection, env), useTls(e) ? tls : undefined))
  const settled = await Promise.allSettled(endpoints.map(open))
  const clients = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')
  if (failed) {
    await Promise.all(clients.map((c) => c.close()))
    throw failed.reason
  }
  return {
    client: name,
    redis: clients.length === 1 ? clients[0]!.raw : clients.map((c) => c.raw),
    scanNodes: async () => clients.map((c) => c.node),
    close: async () => void (await Promise.all(clients.map((c) => c.close()))),
  }
}

interface Opened {
  raw: RedisClient
  node: ScanNode
  close(): Promise<void>
}

const unreachable = (url: string, err: unknown) =>
  new Exit(isPermissionError(err) ? Status.NOPERM : Status.UNAVAILABLE, `cannot connect to Redis at ${redact(url)}: ${(err as Error)?.message ?? String(err)}`, { cause: err })

async function ioredisClient(mod: any, e: Endpoint, auth: object, tls: object | undefined): Promise<Opened> {
  const Redis = mod.Redis ?? mod.default
  let connected = false
  const client = new Redis({
    host: e.host,
    port: e.port,
    db: e.db,
    ...auth,
    ...(tls && { tls }),
    lazyConnect: true,
    connectTimeout: TCP_TIMEOUT_MS,
    maxRetriesPerRequest: 3,
    // disconnect() at the end must not keep a timer of ioredis' waiting for a FIN.
    disconnectTimeout: 0,
    // Fail at once if Redis is not there to begin with; once connected, ride out short outages.
    retryStrategy: (attempt: number) => (connected ? Math.min(attempt * 100, 2_000) : null),
  })
  let lastError: Error | undefined
  // Later errors surface as failed commands or a lost lease; ioredis reconnects by itself.
  client.on('error', (err: Error) => void (lastError = err))
  try {
    await handshake(e.url, client, () => client.disconnect())
    connected = true
  } catch (err) {
    throw err instanceof Exit ? err : unreachable(e.url, lastError ?? err)
  }
  return {
    raw: client,
    node: ioredisNode(client, e.url),
    close: async () => {
      await within(1_000, client.quit())
      client.disconnect()
    },
  }
}

const ioredisNode = (client: any, url: string): ScanNode => ({
  scan: (cursor, match, count) => scanWithin(url, client.call('SCAN', cursor, 'MATCH', match, 'COUNT', count) as Promise<[string, string[]]>),
})

async function nodeRedisClient(mod: any, e: Endpoint, auth: object, tls: object | undefined): Promise<Opened> {
  let connected = false
  const client = mod.createClient({
    ...auth,
    database: e.db,
    socket: {
      host: e.host,
      port: e.port,
      ...(tls && { tls: true, ...tls }),
      connectTimeout: TCP_TIMEOUT_MS,
      // An Error ends the reconnecting: fail at once if Redis is not there to begin with.
      reconnectStrategy: (retries: number, cause: Error) => (connected ? Math.min(retries * 100, 2_000) : cause),
    },
  })
  client.on('error', () => {})
  try {
    await handshake(e.url, client, () => client.destroy())
    connected = true
  } catch (err) {
    throw err instanceof Exit ? err : unreachable(e.url, err)
  }
  return { raw: client, node: nodeRedisNode(client, e.url), close: () => closeNodeRedis(client) }
}

const nodeRedisNode = (client: any, url: string): ScanNode => ({
  scan: async (cursor, match, count) => {
    const [next, keys] = (await scanWithin(url, client.sendCommand(['SCAN', cursor, 'MATCH', match, 'COUNT', String(count)]))) as [unknown, unknown[]]
    return [String(next), keys.map(String)]
  },
})

async function closeNodeRedis(client: any): Promise<void> {
  if (!client.isOpen) return
  await within(1_000, client.close())
  if (client.isOpen) client.destroy()
}

async function ioredisCluster(mod: any, endpoints: Endpoint[], connection: Connection, env: NodeJS.ProcessEnv, tls: object, useTls: (e: Endpoint) => boolean): Promise<Connected> {
  const Cluster = mod.Cluster ?? mod.default?.Cluster
  const first = endpoints[0]!
  const secure = endpoints.some(useTls)
  let connected = false
  const cluster = new Cluster(
    endpoints.map((e) => ({ host: e.host, port: e.port })),
    {
      lazyConnect: true,
      clusterRetryStrategy: (attempt: number) => (connected ? Math.min(attempt * 100, 2_000) : null),
      slotsRefreshTimeout: SLOTS_TIMEOUT_MS,
      // TLS certificates name hosts; keep the names the seeds were given by.
      ...(secure && { dnsLookup: (address: string, callback: (err: null, address: string) => void) => callback(null, address) }),
      redisOptions: { ...credentials(first.url, connection, env), ...(secure && { tls }), connectTimeout: TCP_TIMEOUT_MS, maxRetriesPerRequest: 3, disconnectTimeout: 0 },
    },
  )
  let lastError: Error | undefined
  cluster.on('error', (err: Error) => void (lastError = err))
  try {
    await handshake(first.url, cluster, () => cluster.disconnect(), 'cluster')
    connected = true
  } catch (err) {
    cluster.disconnect()
    if (err instanceof Exit) throw err
    // No seed answered CLUSTER SLOTS in time (ioredis' own timeout spoke first); the 'error' event tells it.
    if ((lastError as { lastNodeError?: Error } | undefined)?.lastNodeError?.message === 'timeout') {
      throw new Exit(Status.UNAVAILABLE, `Redis at ${redact(first.url)} did not answer within ${SLOTS_TIMEOUT_MS} ms: no cluster seed answered CLUSTER SLOTS (Redis paused or overloaded, or a firewall?)`, { cause: err })
    }
    throw unreachable(first.url, lastError ?? err)
  }
  const urlOf = (node: any) => `${secure ? 'rediss' : 'redis'}://${node.options.host}:${node.options.port}`
  return {
    client: 'ioredis',
    redis: cluster,
    scanNodes: async () => (cluster.nodes('master') as unknown[]).map((node) => ioredisNode(node, urlOf(node))),
    close: async () => {
      await within(1_000, cluster.quit())
      cluster.disconnect()
    },
  }
}

async function nodeRedisCluster(mod: any, endpoints: Endpoint[], connection: Connection, env: NodeJS.ProcessEnv, tls: object, useTls: (e: Endpoint) => boolean): Promise<Connected> {
  const first = endpoints[0]!
  const secure = endpoints.some(useTls)
  let connected = false
  const cluster = mod.createCluster({
    rootNodes: endpoints.map((e) => ({ socket: { host: e.host, port: e.port } })),
    defaults: {
      ...credentials(first.url, connection, env),
      socket: {
        ...(secure && { tls: true, ...tls }),
        connectTimeout: TCP_TIMEOUT_MS,
        reconnectStrategy: (retries: number, cause: Error) => (connected ? Math.min(retries * 100, 2_000) : cause),
      },
    },
  })
  cluster.on('error', () => {})
  try {
    await handshake(first.url, cluster, () => cluster.destroy(), 'cluster')
    connected = true
  } catch (err) {
    await within(1_000, Promise.resolve().then(() => cluster.destroy()))
    throw err instanceof Exit ? err : unreachable(first.url, err)
  }
  const urlOf = (m: { host: string; port: number }) => `${secure ? 'rediss' : 'redis'}://${m.host}:${m.port}`
  return {
    client: 'node-redis',
    redis: cluster,
    // nodeClient connects to a master on first use: bounded like the SCAN that follows.
    scanNodes: async () => Promise.all((cluster.masters as { host: string; port: number }[]).map(async (m) => nodeRedisNode(await scanWithin(urlOf(m), Promise.resolve(cluster.nodeClient(m))), urlOf(m)))),
    close: async () => {
      await within(1_000, cluster.close())
      if (cluster.isOpen) cluster.destroy()
    },
  }
}
