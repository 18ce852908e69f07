import { lastClientError, leaving, type ClientParts, type SubscriberConnection } from './adapter.js'

type Reply = (err: Error | null, reply: unknown) => void

/**
 * The parts of a node_redis 3 client (`require('redis').createClient()`, callbacks, snake_case)
 * that fencelock uses: node-redlock v4's users pass such clients, so its drop-in takes them.
 */
export interface NodeRedis3Like {
  connected: boolean
  closing?: boolean
  send_command(command: string, args: (string | number)[], callback: Reply): unknown
  duplicate(): NodeRedis3Like
  on(event: string, listener: (...args: any[]) => void): unknown
  listenerCount?(event: string): number
  subscribe(channel: string, callback?: Reply): unknown
  unsubscribe(channel: string, callback?: Reply): unknown
  quit(callback?: Reply): unknown
  end(flush: boolean): unknown
}

export function isNodeRedis3(client: unknown): client is NodeRedis3Like {
  const c = client as Partial<NodeRedis3Like> | null
  return typeof c === 'object' && c !== null && typeof c.send_command === 'function' && typeof c.duplicate === 'function' && typeof c.connected === 'boolean'
}

/** One command as a promise. */
const send = (client: NodeRedis3Like, command: string, args: (string | number)[]): Promise<unknown> =>
  new Promise((resolve, reject) => {
    client.send_command(command, args, (err, reply) => (err ? reject(err) : resolve(reply)))
  })

/** A node_redis 3 client (single node; it has no cluster client). */
export function nodeRedis3Parts(client: NodeRedis3Like): ClientParts {
  const isClosed = () => client.closing === true
  // node_redis 3 throws an 'error' that nobody listens to; fencelock's own listener must not
  // silence it altogether: it is printed, as ioredis prints its own.
  const clientError = lastClientError(client, (err) => {
    if (err instanceof Error) console.error('[node_redis] Unhandled error event:', err.stack)
  })
  return {
    kind: 'node-redis',
    isCluster: false,
    isClosed,
    clientError,
    sender: {
      evalsha: (sha, keys, args) => send(client, 'EVALSHA', [sha, keys.length, ...keys, ...args]),
      eval: (source, keys, args) => send(client, 'EVAL', [source, keys.length, ...keys, ...args]),
      command: ([name, ...args]) => send(client, name!, args),
    },
    command: ([name, ...args]) => send(client, name!, args).catch((err: unknown) => Promise.reject(leaving(err, isClosed))),
    createSubscriber: async () => subscriberOf(client.duplicate()),
  }
}

function subscriberOf(sub: NodeRedis3Like): SubscriberConnection {
  const reconnectListeners: (() => void)[] = []
  let ready = false
  // node_redis 3 subscribes again by itself after a reconnect; messages may have been missed meanwhile.
  sub.on('ready', () => {
    if (ready) for (const listener of reconnectListeners) listener()
    ready = true
  })
  sub.on('error', () => {})
  const call = (method: 'subscribe' | 'unsubscribe', channel: string) =>
    new Promise<void>((resolve, reject) => {
      sub[method](channel, (err) => (err ? reject(err) : resolve()))
    })
  return {
    subscribe: (channel) => call('subscribe', channel),
    unsubscribe: (channel) => call('unsubscribe', channel),
    onMessage: (listener) => void sub.on('message', listener),
    onReconnect: (listener) => void reconnectListeners.push(listener),
    close: async () => void sub.end(true),
  }
}
