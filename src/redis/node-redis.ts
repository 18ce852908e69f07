import { lastClientError, leaving, retryTryAgain, argvSender, type ClientParts, type SubscriberConnection } from './adapter.js'

/** The parts of a node-redis (v4 and later) client that fencelock uses. */
export interface NodeRedisClientLike {
  isOpen: boolean
  isReady?: boolean
  sendCommand(args: string[]): Promise<unknown>
  duplicate(overrides?: object): NodeRedisClientLike
  /** The options it was created with (node-redis 4 and later); `socket` includes the reconnect strategy. */
  readonly options?: { readonly socket?: object }
  connect(): Promise<unknown>
  on(event: string, listener: (...args: any[]) => void): unknown
  subscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown>
  unsubscribe(channel: string): Promise<unknown>
  quit?(): Promise<unknown>
  close?(): Promise<unknown>
  disconnect?(): Promise<unknown>
}

/** A node-redis cluster client: commands are routed by their first key. */
export interface NodeRedisClusterLike {
  isOpen: boolean
  masters: unknown[]
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>
  duplicate(): NodeRedisClusterLike
  connect(): Promise<unknown>
  on(event: string, listener: (...args: any[]) => void): unknown
  subscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown>
  unsubscribe(channel: string): Promise<unknown>
  quit?(): Promise<unknown>
  close?(): Promise<unknown>
  disconnect?(): Promise<unknown>
}

/**
 * A node-redis sentinel client (`createSentinel`, node-redis 5 and later): commands go to the
 * current master, and its own pub/sub connection follows the master through a failover.
 */
export interface NodeRedisSentinelLike {
  isOpen: boolean
  sendCommand(isReadonly: boolean | undefined, args: string[]): Promise<unknown>
  getMasterNode(): unknown
  on(event: string, listener: (...args: any[]) => void): unknown
  off(event: string, listener: (...args: any[]) => void): unknown
  subscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown>
  unsubscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown>
}

type NodeRedisLike = NodeRedisClientLike | NodeRedisClusterLike | NodeRedisSentinelLike

/**
 * A client, cluster or sentinel client. A client pool (`createClientPool`) has `sendCommand` too,
 * but no connection of its own to subscribe on (no `duplicate()`): waiters could never be woken.
 */
export function isNodeRedis(client: unknown): client is NodeRedisLike {
  const c = client as Partial<NodeRedisClientLike & NodeRedisSentinelLike> | null
  return (
    typeof c === 'object' &&
    c !== null &&
    typeof c.sendCommand === 'function' &&
    typeof c.isOpen === 'boolean' &&
    (typeof c.duplicate === 'function' || typeof c.getMasterNode === 'function')
  )
}

const isNodeRedisCluster = (client: NodeRedisLike): client is NodeRedisClusterLike => Array.isArray((client as NodeRedisClusterLike).masters)

// A sentinel client has no duplicate() and takes `isReadonly` before the arguments.
const isNodeRedisSentinel = (client: NodeRedisLike): client is NodeRedisSentinelLike => typeof (client as NodeRedisSentinelLike).getMasterNode === 'function'

export function nodeRedisParts(client: NodeRedisLike): ClientParts {
  const cluster = isNodeRedisCluster(client)
  const sentinel = isNodeRedisSentinel(client)
  const isClosed = () => !client.isOpen
  const send = cluster
    ? (args: string[], key?: string) => retryTryAgain(() => client.sendCommand(key, false, args))
    : sentinel
      ? (args: string[]) => client.sendCommand(false, args)
      : (args: string[]) => (client as NodeRedisClientLike).sendCommand(args)
  // node-redis is an EventEmitter: an 'error' that nobody listens to is thrown where it is emitted.
  const clientError = lastClientError(client, (err) => {
    throw err
  })
  return {
    kind: 'node-redis',
    isCluster: cluster,
    isClosed,
    clientError,
    sender: argvSender(send),
    command: (args, key) => send([...args], key).catch((err: unknown) => Promise.reject(leaving(err, isClosed))),
    async createSubscriber(): Promise<SubscriberConnection> {
      if (sentinel) return sentinelSubscriber(client)
      let closed = false
      const sub = cluster ? client.duplicate() : duplicateForPubSub(client as NodeRedisClientLike, () => closed)
      const messageListeners: ((channel: string, message: string) => void)[] = []
      const reconnectListeners: (() => void)[] = []
      let ready = false
      sub.on('ready', () => {
        if (ready) for (const listener of reconnectListeners) listener()
        ready = true
      })
      sub.on('error', () => {})
      // node-redis is creating a socket (destroy() would miss it) from connect() or 'reconnecting'
      // until 'connect' or 'error'; in between attempts (its retry sleep) destroy() is safe.
      let creating = true
      sub.on('reconnecting', () => void (creating = true))
      sub.on('connect', () => void (creating = false))
      sub.on('error', () => void (creating = false))
      // Not awaited: connect() stays pending for as long as the server is down (node-redis keeps
      // retrying), and close() must still be able to end it (quorum mode with a dead node).
      const connected = sub.connect().then(() => void (ready = true))
      connected.catch(() => {})
      const deliver = (message: string, channel: string) => {
        for (const listener of messageListeners) listener(channel, message)
      }
      return {
        subscribe: async (channel) => {
          await connected
          await sub.subscribe(channel, deliver)
        },
        unsubscribe: async (channel) => {
          await connected
          await sub.unsubscribe(channel)
        },
        onMessage: (listener) => void messageListeners.push(listener),
        onReconnect: (listener) => void reconnectListeners.push(listener),
        // destroy (v5) or disconnect (v4): at once, without waiting for replies that a dead or
        // half-open connection will never send; and never throwing on a client that closed itself.
        // Not while the socket is still being created, though: node-redis' destroy() then misses
        // that socket, which opens a moment later and stays open for good (found by the property
        // tests: a connection of fencelock's, subscribed to nothing, outliving close()). Then the
        // connection ends as soon as it is up, or as soon as this attempt to open it failed.
        close: async () => {
          closed = true
          const end = async () => {
            try {
              const sock = sub as { destroy?: () => unknown; disconnect?: () => unknown }
              await (sock.destroy ? sock.destroy() : sock.disconnect?.())
            } catch {}
          }
          if (ready || !creating) return end()
          let ended = false
          const once = () => {
            if (ended) return
            ended = true
            void end()
          }
          sub.on('connect', once)
          sub.on('error', once)
        },
      }
    },
  }
}

/** The longest pause between two reconnect attempts of fencelock's own pub/sub connection. */
const PUBSUB_RETRY_CAP_MS = 250

type ReconnectStrategy = false | number | ((retries: number, cause: Error) => false | Error | number)

/**
 * The caller's client, duplicated for pub/sub, with a reconnect strategy of fencelock's: node-redis
 * sleeps between attempts on a timer that destroy() cannot cancel, so a long pause (the caller's
 * strategy, or node-redis' default of up to 2.2 s) would keep the process alive that long after
 * close(). The caller's strategy still decides whether to retry; the pause is at most
 * PUBSUB_RETRY_CAP_MS (+ up to 50 ms of jitter), and none follows close().
 */
function duplicateForPubSub(client: NodeRedisClientLike, closed: () => boolean): NodeRedisClientLike {
  const socket = client.options?.socket as { reconnectStrategy?: ReconnectStrategy } | undefined
  const theirs = socket?.reconnectStrategy
  const reconnectStrategy = (retries: number, cause: Error): false | Error | number => {
    if (closed()) return false
    const pause = typeof theirs === 'function' ? theirs(retries, cause) : (theirs ?? 2 ** retries * 50)
    if (typeof pause !== 'number') return pause
    return Math.min(pause, PUBSUB_RETRY_CAP_MS) + Math.floor(Math.random() * 50)
  }
  // No CLIENT SETINFO in its handshake (node-redis 5's `disableClientInfo`; node-redis 4 ignores
  // the option): on a server without it (Redis before 7.2), a reconnect put that command's error
  // reply where a SUBSCRIBE asked for meanwhile read it as its own: a refusal of SUBSCRIBE, and the
  // wait failed at once.
  return client.duplicate({ socket: { ...socket, reconnectStrategy }, disableClientInfo: true })
}

/**
 * A sentinel client cannot be duplicated, but its pub/sub already runs on a connection of its own
 * that follows the master. This connection subscribes there with its own listener, so closing it
 * unsubscribes only that listener (the user's subscriptions, and a replacing connection's, stay).
 * A master change may have dropped messages: the listeners look again.
 */
function sentinelSubscriber(client: NodeRedisSentinelLike): SubscriberConnection {
  const messageListeners: ((channel: string, message: string) => void)[] = []
  const reconnectListeners: (() => void)[] = []
  const channels = new Set<string>()
  const deliver = (message: string, channel: string) => {
    for (const listener of messageListeners) listener(channel, message)
  }
  const onTopology = (event: { type?: string }) => {
    if (event?.type === 'MASTER_CHANGE') for (const listener of reconnectListeners) listener()
  }
  client.on('topology-change', onTopology)
  return {
    subscribe: async (channel) => {
      channels.add(channel)
      await client.subscribe(channel, deliver)
    },
    unsubscribe: async (channel) => {
      channels.delete(channel)
      await client.unsubscribe(channel, deliver)
    },
    onMessage: (listener) => void messageListeners.push(listener),
    onReconnect: (listener) => void reconnectListeners.push(listener),
    close: async () => {
      client.off('topology-change', onTopology)
      const subscribed = [...channels]
      channels.clear()
      if (client.isOpen) await Promise.allSettled(subscribed.map((channel) => client.unsubscribe(channel, deliver)))
    },
  }
}
