// Clients of ioredis: one node, or a Redis Cluster from its seeds.
import type { Connection } from './command.js'
import type { Connected, Opened } from './connected.js'
import { handshake, scanWithin, SLOTS_TIMEOUT_MS, TCP_TIMEOUT_MS } from './deadlines.js'
import { credentials, unreachable, type Endpoint } from './endpoint.js'
import { Exit, Status, within } from './exit.js'
import type { ScanNode } from './scan.js'
import { redact } from './values.js'

export async function ioredisClient(mod: any, e: Endpoint, auth: object, tls: object | undefined): Promise<Opened> {
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

export async function ioredisCluster(
  mod: any,
  endpoints: Endpoint[],
  connection: Connection,
  env: NodeJS.ProcessEnv,
  tls: object,
  useTls: (e: Endpoint) => boolean,
): Promise<Connected> {
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
      redisOptions: {
        ...credentials(first.url, connection, env),
        ...(secure && { tls }),
        connectTimeout: TCP_TIMEOUT_MS,
        maxRetriesPerRequest: 3,
        disconnectTimeout: 0,
      },
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
      throw new Exit(
        Status.UNAVAILABLE,
        `Redis at ${redact(first.url)} did not answer within ${SLOTS_TIMEOUT_MS} ms: no cluster seed answered CLUSTER SLOTS (Redis paused or overloaded, or a firewall?)`,
        { cause: err },
      )
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
