// Clients of node-redis: one node, or a Redis Cluster from its seeds.
import type { Connection } from './command.js'
import type { Connected, Opened } from './connected.js'
import { handshake, scanWithin, TCP_TIMEOUT_MS } from './deadlines.js'
import { credentials, unreachable, type Endpoint } from './endpoint.js'
import { Exit, within } from './exit.js'
import type { ScanNode } from './scan.js'

export async function nodeRedisClient(mod: any, e: Endpoint, auth: object, tls: object | undefined): Promise<Opened> {
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

export async function nodeRedisCluster(
  mod: any,
  endpoints: Endpoint[],
  connection: Connection,
  env: NodeJS.ProcessEnv,
  tls: object,
  useTls: (e: Endpoint) => boolean,
): Promise<Connected> {
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
    await within(
      1_000,
      Promise.resolve().then(() => cluster.destroy()),
    )
    throw err instanceof Exit ? err : unreachable(first.url, err)
  }
  const urlOf = (m: { host: string; port: number }) => `${secure ? 'rediss' : 'redis'}://${m.host}:${m.port}`
  return {
    client: 'node-redis',
    redis: cluster,
    // nodeClient connects to a master on first use: bounded like the SCAN that follows.
    scanNodes: async () =>
      Promise.all(
        (cluster.masters as { host: string; port: number }[]).map(async (m) =>
          nodeRedisNode(await scanWithin(urlOf(m), Promise.resolve(cluster.nodeClient(m))), urlOf(m)),
        ),
      ),
    close: async () => {
      await within(1_000, cluster.close())
      if (cluster.isOpen) cluster.destroy()
    },
  }
}
