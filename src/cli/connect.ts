// Clients for the connection the command line describes: one node, a quorum of independent nodes
// (several --redis), or a Redis Cluster (--cluster); ioredis or node-redis; TLS and ACL user.
// The client libraries are loaded at run time: they are optional peers of fencelock, and a missing
// one is reported with what to install.
import type { Connection } from './command.js'
import { ioredisClient, ioredisCluster } from './connect-ioredis.js'
import { nodeRedisClient, nodeRedisCluster } from './connect-node-redis.js'
import type { Connected } from './connected.js'
import { credentials, endpoint, tlsOptions, type Endpoint } from './endpoint.js'
import { Exit, Status } from './exit.js'
import type { ClientName } from './values.js'

export type { Connected } from './connected.js'

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
  const open = (e: Endpoint) =>
    name === 'ioredis'
      ? ioredisClient(mod, e, credentials(e.url, connection, env), useTls(e) ? tls : undefined)
      : nodeRedisClient(mod, e, credentials(e.url, connection, env), useTls(e) ? tls : undefined)
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
