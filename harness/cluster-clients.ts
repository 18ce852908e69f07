// The two cluster clients the suites run against, each connected to a local Redis Cluster and
// ready (slots known) before a test uses it: ioredis `Cluster`, node-redis `createCluster` and
// GLIDE's `GlideClusterClient` (when FENCELOCK_ADAPTERS names it).
import { Cluster } from 'ioredis'
import { createCluster } from 'redis'
import { afterAll, beforeAll } from 'vitest'
import { createLocks, type Locks, type LocksOptions, type RedisClient } from '../src/index.js'
import { adapters, connectGlideCluster } from './clients.js'
import type { RedisCluster } from './redis-server.js'

export interface ClusterClient {
  raw: RedisClient
  close(): Promise<void>
}

export interface ClusterAdapter {
  name: string
  connect(cluster: RedisCluster): Promise<ClusterClient>
}

/** Every cluster client, whatever FENCELOCK_ADAPTERS names (a suite where the point is that they agree). */
export const everyCluster: readonly ClusterAdapter[] = [
  {
    name: 'ioredis',
    async connect(cluster) {
      const client = new Cluster([{ host: '127.0.0.1', port: cluster.nodes[0]!.port }])
      client.on('error', () => {})
      await new Promise<void>((resolve, reject) => {
        client.once('ready', resolve)
        client.once('end', () => reject(new Error('cluster client ended')))
      })
      return { raw: client, close: async () => client.disconnect() }
    },
  },
  {
    name: 'node-redis',
    async connect(cluster) {
      const client = createCluster({ rootNodes: [{ url: cluster.nodes[0]!.url }] })
      client.on('error', () => {})
      await client.connect()
      return { raw: client, close: async () => void client.destroy() }
    },
  },
  {
    name: 'glide',
    async connect(cluster) {
      const client = await connectGlideCluster([cluster.nodes[0]!.url])
      return { raw: client, close: async () => client.close() }
    },
  },
]

/** The cluster clients of the adapters the suites run with (FENCELOCK_ADAPTERS, see clients.ts). */
export const clusterAdapters: ClusterAdapter[] = everyCluster.filter((c) => adapters.some((a) => a.name === c.name))

/**
 * One client of `adapter` on `cluster` for the enclosing describe, connected and ready (slots known)
 * before its tests, closed after them. Read `client` inside a test or a hook.
 */
export function useClusterClient(adapter: ClusterAdapter, cluster: RedisCluster): { readonly client: ClusterClient } {
  let client: ClusterClient | undefined
  beforeAll(async () => {
    client = await adapter.connect(cluster)
  })
  afterAll(() => client?.close())
  return {
    get client() {
      if (client === undefined) throw new Error('the cluster client is made in beforeAll: read it inside a test or a hook')
      return client
    },
  }
}

export interface ClusterLocks {
  /** The first of the two clients: the one `locks` is on. */
  readonly client: ClusterClient
  /** `createLocks` on the first client. */
  readonly locks: Locks
  /** `createLocks` on a second client: another process, as the cluster can tell. */
  readonly other: Locks
}

/** Two clients of `adapter` on `cluster` and an instance on each, for the enclosing describe. */
export function useClusterLocks(adapter: ClusterAdapter, cluster: RedisCluster, options: Omit<LocksOptions, 'redis'> = {}): ClusterLocks {
  const clients: ClusterClient[] = []
  let locks: Locks | undefined
  let other: Locks | undefined
  beforeAll(async () => {
    clients.push(await adapter.connect(cluster), await adapter.connect(cluster))
    locks = createLocks({ redis: clients[0]!.raw, ...options })
    other = createLocks({ redis: clients[1]!.raw, ...options })
  })
  afterAll(async () => {
    await locks?.close()
    await other?.close()
    for (const c of clients) await c.close()
  })
  const made = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the cluster clients are made in beforeAll: read them inside a test or a hook')
    return value
  }
  return {
    get client() {
      return made(clients[0])
    },
    get locks() {
      return made(locks)
    },
    get other() {
      return made(other)
    },
  }
}
