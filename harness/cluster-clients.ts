// The two cluster clients the suites run against, each connected to a local Redis Cluster and
// ready (slots known) before a test uses it: ioredis `Cluster` and node-redis `createCluster`.
import { Cluster } from 'ioredis'
import { createCluster } from 'redis'
import type { RedisClient } from '../src/index.js'
import type { RedisCluster } from './redis-server.js'

export interface ClusterClient {
  raw: RedisClient
  close(): Promise<void>
}

export interface ClusterAdapter {
  name: string
  connect(cluster: RedisCluster): Promise<ClusterClient>
}

export const clusterAdapters: ClusterAdapter[] = [
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
]
