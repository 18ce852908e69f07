import { lastClientError, leaving, retryTryAgain, type ClientParts, type SubscriberConnection } from './adapter.js'

/** The parts of ioredis' `Redis` and `Cluster` that fencelock uses. */
export interface IORedisLike {
  status: string
  isCluster?: boolean
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>
  call(command: string, ...args: (string | number)[]): Promise<unknown>
  duplicate(...args: any[]): IORedisLike
  on(event: string, listener: (...args: any[]) => void): unknown
  listenerCount?(event: string): number
  subscribe(...channels: string[]): Promise<unknown>
  unsubscribe(...channels: string[]): Promise<unknown>
  quit(): Promise<unknown>
  disconnect(): void
}

export function isIORedis(client: unknown): client is IORedisLike {
  const c = client as Partial<IORedisLike> | null
  return typeof c === 'object' && c !== null && typeof c.evalsha === 'function' && typeof c.call === 'function' && typeof c.status === 'string'
}

export function ioredisParts(client: IORedisLike): ClientParts {
  const cluster = client.isCluster === true
  const isClosed = () => client.status === 'end'
  // The client's own evalsha/eval: on the hot path, no argument array is built twice.
  const sender = {
    evalsha: (sha: string, keys: readonly string[], args: readonly (string | number)[]) => client.evalsha(sha, keys.length, ...keys, ...args),
    eval: (source: string, keys: readonly string[], args: readonly (string | number)[]) => client.eval(source, keys.length, ...keys, ...args),
    command: (args: string[]) => client.call(args[0]!, ...args.slice(1)),
  }
  // A cluster client gives up on TRYAGAIN after its own 16 retries: keep going (see retryTryAgain).
  const scripts: ClientParts['sender'] = cluster
    ? {
        evalsha: (sha, keys, args) => retryTryAgain(() => sender.evalsha(sha, keys, args)),
        eval: (source, keys, args) => retryTryAgain(() => sender.eval(source, keys, args)),
        command: (args) => retryTryAgain(() => sender.command(args)),
      }
    : sender
  // ioredis prints an 'error' that nobody listens to (and carries on).
  const clientError = lastClientError(client, (err) => {
    if (err instanceof Error) console.error('[ioredis] Unhandled error event:', err.stack)
  })
  return {
    kind: 'ioredis',
    isCluster: cluster,
    isClosed,
    clientError,
    sender: scripts,
    command: ([name, ...args]) => client.call(name!, ...args).catch((err: unknown) => Promise.reject(leaving(err, isClosed))),
    async createSubscriber(): Promise<SubscriberConnection> {
      // disconnectTimeout 0: on close, destroy the socket at once instead of keeping the process
      // alive for ioredis' default 2 s while a dead server never answers the FIN.
      // enableReadyCheck off: ioredis writes SUBSCRIBE (a command allowed while loading) during its
      // INFO ready check; the connection enters subscriber mode, INFO fails, ioredis reconnects and
      // the channel is silently lost. A pub/sub connection has nothing to wait for anyway.
      // commandTimeout off: ioredis resubscribes after a reconnect without handling the promise, so
      // a timed-out resubscribe would be an unhandled rejection that ends the process. The shared
      // subscriber's own watchdog (subscriber.ts) covers a connection that stops answering.
      // autoResubscribe off (one node): ioredis' own resubscribe after a reconnect leaves its promise
      // unhandled, and a close before the reply (locks.close() just after a Redis restart) ended
      // the process with an unhandled "Connection is closed."; this connection resubscribes itself.
      const overrides = { disconnectTimeout: 0, lazyConnect: false, enableReadyCheck: false, commandTimeout: undefined }
      const sub = cluster
        ? client.duplicate(undefined, { redisOptions: overrides, lazyConnect: false })
        : client.duplicate({ ...overrides, autoResubscribe: false })
      const channels = new Set<string>()
      let ready = false
      sub.on('ready', () => {
        if (ready) {
          // A refusal or a drop before the reply is not fatal: a drop comes back here once
          // reconnected, and the waiters' own re-checks cover a channel left unsubscribed.
          if (!cluster && channels.size > 0) sub.subscribe(...channels).catch(() => {})
          // Messages may have been missed meanwhile: the listeners look again.
          for (const listener of reconnectListeners) listener()
        }
        ready = true
      })
      // Errors surface as reconnects; an unhandled 'error' event would crash the process.
      sub.on('error', () => {})
      const reconnectListeners: (() => void)[] = []
      return {
        subscribe: async (channel) => {
          channels.add(channel)
          await sub.subscribe(channel)
        },
        unsubscribe: async (channel) => {
          channels.delete(channel)
          await sub.unsubscribe(channel)
        },
        onMessage: (listener) => void sub.on('message', listener),
        onReconnect: (listener) => void reconnectListeners.push(listener),
        // disconnect, not quit: QUIT would sit in the offline queue while the server is down,
        // and the reconnect loop would keep the process alive.
        close: async () => sub.disconnect(),
      }
    },
  }
}
