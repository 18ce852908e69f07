import { InvalidArgumentError } from '../errors/errors.js'
import { closedClient } from '../errors/failures.js'
import { describeValue } from '../util/validate.js'
import type { ClientParts, RedisAdapter } from './adapter.js'
import { glideParts, isGlide } from './glide.js'
import { ioredisParts, isIORedis } from './ioredis.js'
import { isNodeRedis, nodeRedisParts } from './node-redis.js'
import { isNodeRedis3, nodeRedis3Parts } from './node-redis3.js'
import { scriptRunner } from './script-runner.js'

export type { RedisAdapter, SubscriberConnection } from './adapter.js'
export type { GlideClient, IORedisClient, NodeRedisClient, NodeRedisCluster, NodeRedisSentinel, RedisClient } from './client-types.js'
export type { GlideClientLike } from './glide.js'
export type { IORedisLike } from './ioredis.js'
export type { NodeRedisClientLike, NodeRedisClusterLike, NodeRedisSentinelLike } from './node-redis.js'

const adapters = new WeakMap<object, RedisAdapter>()

/**
 * The client kinds fencelock speaks to, told apart by shape, in this order (a node-redis 4+
 * client would also pass node_redis 3's test): each adapter file says whether a client is its
 * kind and makes its parts.
 */
const CLIENT_KINDS: readonly { readonly is: (client: object) => boolean; readonly parts: (client: never) => ClientParts }[] = [
  { is: isIORedis, parts: ioredisParts },
  { is: isNodeRedis, parts: nodeRedisParts },
  { is: isGlide, parts: glideParts },
  // node_redis 3 (callbacks): what node-redlock v4's users pass to its drop-in.
  { is: isNodeRedis3, parts: nodeRedis3Parts },
]

/** A client's parts with the script path added: one script runner over its sender. */
export function withScripts(parts: ClientParts): RedisAdapter {
  const { sender, asRedisWrote, ...rest } = parts
  const runner = scriptRunner(sender, parts.isClosed, asRedisWrote)
  return { ...rest, evalScript: runner.evalScript, evalThenWait: runner.evalThenWait }
}

const MAKE_CLIENT = 'make a client from it: `new Redis(url)` (ioredis, iovalkey) or `await createClient({ url }).connect()` (node-redis)'
const PASS_CLIENT =
  'pass an ioredis or iovalkey `Redis` / `Cluster` (`new Redis({ sentinels, name })` for Sentinel), ' +
  'a node-redis client from `createClient()`, `createCluster()` or `createSentinel()`, ' +
  'or a Valkey GLIDE `GlideClient` / `GlideClusterClient` (`await GlideClient.createClient({ addresses })`)'

/** A URL as the user wrote it, minus the password (error messages end up in logs). */
const redactUrl = (url: string): string => url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/]*):[^@/]*@/i, '$1:***@')

/** What is wrong with `value`, and what to pass instead. */
function notAClient(value: unknown, name: string): InvalidArgumentError {
  const expected = `Expected \`${name}\` to be a Redis client`
  if (typeof value === 'string') {
    const shown = describeValue(redactUrl(value))
    return new InvalidArgumentError(`${expected}, got ${shown} (a string, not a client): ${MAKE_CLIENT}`)
  }
  if (typeof value !== 'object' || value === null) {
    return new InvalidArgumentError(`${expected}, got ${describeValue(value)}: ${PASS_CLIENT}; from a URL, ${MAKE_CLIENT}`)
  }
  const keys = Object.keys(value)
  const has = (key: string) => typeof (value as Record<string, unknown>)[key] === 'function'
  if (has('sendCommand') && has('execute') && !has('duplicate')) {
    // A pool has no connection of its own to SUBSCRIBE on, so waiters could never be woken.
    return new InvalidArgumentError(
      `${expected}, got a node-redis client pool (\`createClientPool()\`): fencelock needs a client of its own for pub/sub; pass \`await createClient({ url }).connect()\` instead`,
    )
  }
  if (['host', 'port', 'url', 'socket', 'path'].some((key) => keys.includes(key))) {
    return new InvalidArgumentError(
      `${expected}, got connection options (keys ${keys.slice(0, 8).join(',')}): make a client from them: \`new Redis({ host, port })\` (ioredis, iovalkey) or \`await createClient({ url }).connect()\` (node-redis)`,
    )
  }
  return new InvalidArgumentError(
    `${expected} (ioredis 5 or 6, iovalkey, node-redis 4 to 6, or Valkey GLIDE 2), got an object with keys ${describeValue(keys.slice(0, 8).join(','))}: ${PASS_CLIENT}`,
  )
}

/**
 * Wraps an ioredis, iovalkey, node-redis (single node, cluster or sentinel) or GLIDE client, told apart
 * by shape. One adapter per client, so every `createLocks` on that client shares one subscriber
 * connection. Anything else is refused here, at once, with what to pass instead: a value that
 * only fails at its first command would surface as a timeout many seconds later.
 */
export function adapterFor(client: unknown, name = 'redis'): RedisAdapter {
  if (typeof client !== 'object' || client === null) throw notAClient(client, name)
  const cached = adapters.get(client)
  if (cached) return cached
  const kind = CLIENT_KINDS.find((k) => k.is(client))
  if (!kind) throw notAClient(client, name)
  const adapter = withScripts(kind.parts(client as never))
  if (adapter.isClosed() && (adapter.kind === 'ioredis' || adapter.kind === 'glide')) throw closedClient(name)
  adapters.set(client, adapter)
  return adapter
}
