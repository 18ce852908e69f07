import type { Backend } from '../topology/backend.js'
import { InvalidArgumentError } from '../errors/errors.js'
import type { LocksOptions } from './locks-options.js'
import { quorumNodeTimeout } from '../topology/quorum/options.js'
import { checkReplicas } from '../topology/replicated.js'
import { adapterFor } from '../redis/index.js'
import { quorum } from '../topology/quorum/quorum.js'
import { replicated } from '../topology/replicated.js'
import { single } from '../topology/single.js'
import type { Primitive } from '../topology/primitive.js'

/** Runs any primitive on the topology the options describe (the facade knows no topology code beyond this choice). */
export type Topology = <Info>(primitive: Primitive<unknown, Info>) => Backend<Info>

export function topologyOf(options: LocksOptions, maxTtl: number): Topology {
  if (Array.isArray(options.redis)) {
    if (options.replicas !== undefined)
      throw new InvalidArgumentError('Expected `replicas` only with a single client: in quorum mode the majority is the replication')
    const clients = options.redis as unknown[]
    const adapters = clients.map((client, i) => adapterFor(client, `redis[${i}]`))
    if (adapters.length === 0) throw new InvalidArgumentError('Expected `redis` to hold at least one client, got an empty array')
    if (new Set(adapters).size !== adapters.length)
      throw new InvalidArgumentError('Expected `redis` to hold distinct clients (one per independent Redis master), got the same client twice')
    const nodeTimeout = quorumNodeTimeout(options.quorum)
    return (primitive) => quorum(adapters, primitive, { maxTtl, nodeTimeout })
  }
  if (options.quorum !== undefined) throw new InvalidArgumentError('Expected `quorum` only with an array of clients (quorum mode)')
  const redis = adapterFor(options.redis)
  if (options.replicas === undefined) return (primitive) => single(redis, primitive, maxTtl)
  const replicas = checkReplicas(options.replicas)
  if (redis.isCluster)
    throw new InvalidArgumentError("Expected `replicas` with a single Redis, not a cluster client (WAIT cannot be routed to the lock's node)")
  return (primitive) => replicated(redis, primitive, maxTtl, replicas)
}
