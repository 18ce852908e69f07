import { InvalidArgumentError, ClosedError } from '../errors.js'
import { describeValue } from '../validate.js'
import type { RedisAdapter } from './adapter.js'
import { ioredisAdapter, isIORedis } from './ioredis.js'
import { isNodeRedis, nodeRedisAdapter } from './node-redis.js'

export type { RedisAdapter, SubscriberConnection } from './adapter.js'
export type { IORedisLike } from './ioredis.js'
export type { NodeRedisClientLike, NodeRedisClusterLike } from './node-redis.js'

const adapters = new WeakMap<object, RedisAdapter>()

/**
 * Wraps an ioredis or node-redis client (single node or cluster), told apart by shape. One
 * adapter per client, so every `createLocks` on that client shares one subscriber connection.
 */
export function adapterFor(client: unknown, name = 'redis'): RedisAdapter {
  if (typeof client !== 'object' || client === null) {
    throw new InvalidArgumentError(`Expected \`${name}\` to be an ioredis or node-redis client, got ${describeValue(client)}`)
  }
  const cached = adapters.get(client)
  if (cached) return cached
  let adapter: RedisAdapter
  if (isIORedis(client)) adapter = ioredisAdapter(client)
  else if (isNodeRedis(client)) adapter = nodeRedisAdapter(client)
  else {
    throw new InvalidArgumentError(
      `Expected \`${name}\` to be an ioredis (>= 5) or node-redis (>= 4) client, got an object with keys ${describeValue(Object.keys(client).slice(0, 8).join(','))}`,
    )
  }
  if (adapter.isClosed() && adapter.kind === 'ioredis') throw closedClient(name)
  adapters.set(client, adapter)
  return adapter
}

export const closedClient = (name = 'redis') =>
  new ClosedError('CLIENT_CLOSED', `The \`${name}\` client is closed; connect it (node-redis: await client.connect()) before use`)
