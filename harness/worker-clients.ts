// The ioredis clients of a worker process (workers/*-worker.ts) for the topology
// its test chose: one client per node, or one Cluster client over the nodes. The tests kill and
// pause those nodes, so every client swallows its 'error' events.
import { Cluster, Redis } from 'ioredis'
import type { RedisClient } from '../src/index.js'

export type WorkerTopology = 'single' | 'cluster' | 'quorum'

export function workerClients(topology: WorkerTopology, urls: readonly string[]): (Redis | Cluster)[] {
  const clients: (Redis | Cluster)[] =
    topology === 'cluster' ? [new Cluster(urls.map((u) => ({ host: new URL(u).hostname, port: Number(new URL(u).port) })))] : urls.map((u) => new Redis(u))
  for (const c of clients) c.on('error', () => {})
  return clients
}

/** What `createLocks({ redis })` takes for that topology: every client in quorum mode, else the one. */
export const redisOption = (topology: WorkerTopology, clients: (Redis | Cluster)[]): RedisClient | RedisClient[] =>
  topology === 'quorum' ? (clients as RedisClient[]) : (clients[0] as RedisClient)
