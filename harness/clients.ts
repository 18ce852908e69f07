// One real client per supported library, so a suite can run once per adapter:
//   describe.each(adapters)('... ($name)', (adapter) => { ... })
// Fault tests kill, pause and restart servers under these clients: every client swallows its
// 'error' events (an unhandled one would crash the test process) and can be torn down by force.
import { Decoder, GlideClient, GlideClusterClient, Logger } from '@valkey/valkey-glide'
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import type { RedisClient } from '../src/index.js'

export type AdapterName = 'ioredis' | 'node-redis' | 'glide'

export interface TestClient {
  readonly adapter: AdapterName
  /** The library's own client object: pass it to `createLocks({ redis })` or `fencedSet`. */
  readonly raw: RedisClient
  /** Any Redis command, e.g. `command('GET', 'k')`; replies as the library returns them. */
  command(...args: (string | number)[]): Promise<unknown>
  /** Graceful QUIT / close: waits for pending replies. Use while the server is healthy. */
  quit(): Promise<void>
  /** Drops the connection at once, whatever state the server is in. Idempotent. */
  disconnect(): Promise<void>
}

export interface ClientAdapter {
  readonly name: AdapterName
  /** Connects to `url` (redis://host:port) and resolves once the client is ready. */
  connect(url: string): Promise<TestClient>
}

const ioredis: ClientAdapter = {
  name: 'ioredis',
  async connect(url) {
    // lazyConnect: a common production setting, kept on purpose: client.duplicate() (fencelock's
    // pub/sub connection) inherits it, and that is a case fencelock must handle.
    // disconnectTimeout 0: disconnect() destroys the socket at once. ioredis' default keeps a
    // 2 s timer (and the process) alive for a FIN that a dead or paused server never sends; that
    // is the caller's own client, not fencelock's, so the exit tests must not measure it.
    const client = new Redis(url, { lazyConnect: true, disconnectTimeout: 0 })
    client.on('error', () => {})
    await client.connect()
    return {
      adapter: 'ioredis',
      raw: client,
      command: (name, ...args) => client.call(String(name), ...args),
      async quit() {
        if (client.status === 'end') return
        await client.quit().catch(() => client.disconnect())
      },
      async disconnect() {
        client.disconnect()
      },
    }
  },
}

const nodeRedis: ClientAdapter = {
  name: 'node-redis',
  async connect(url) {
    // Short pauses between reconnect attempts: node-redis sleeps on a timer that destroy() cannot
    // cancel (by default up to 2.2 s), which would keep a test process alive after it closed
    // everything. That is the caller's own client, not fencelock's (whose pub/sub connection caps
    // its pauses itself), so the exit tests must not measure it.
    const client = createClient({ url, socket: { reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 200) } })
    client.on('error', () => {})
    await client.connect()
    return {
      adapter: 'node-redis',
      raw: client,
      command: (...args) => client.sendCommand(args.map(String)),
      async quit() {
        if (!client.isOpen) return
        await client.close().catch(() => client.destroy())
      },
      async disconnect() {
        if (client.isOpen) client.destroy()
      },
    }
  },
}

/** GLIDE speaks RESP3: a map reply (PUBSUB NUMSUB, CONFIG GET) comes as `[{ key, value }]`; the other clients' flat list. */
function flatMaps(reply: unknown): unknown {
  if (!Array.isArray(reply) || !reply.every((e) => typeof e === 'object' && e !== null && 'key' in e && 'value' in e)) return reply
  return reply.length === 0 ? reply : reply.flatMap((e: { key: unknown; value: unknown }) => [e.key, e.value])
}

/** GLIDE's address list from a redis://host:port URL. */
export function glideAddress(url: string): { host: string; port: number } {
  const { hostname, port } = new URL(url)
  return { host: hostname, port: Number(port || 6379) }
}

const glide: ClientAdapter = {
  name: 'glide',
  async connect(url) {
    // GLIDE logs every error reply at WARN on stdout by default: the fault tests make many.
    Logger.setLoggerConfig('off')
    // requestTimeout 5 s: above the replicas tests' WAIT timeout (GLIDE's default is 250 ms, and it
    // times out a WAIT like any other command).
    const { username, password } = new URL(url)
    const user = username ? { username: decodeURIComponent(username) } : {}
    const credentials = password ? { credentials: { ...user, password: decodeURIComponent(password) } } : {}
    const client = await GlideClient.createClient({ addresses: [glideAddress(url)], requestTimeout: 5_000, ...credentials })
    let closed = false
    const close = async () => {
      if (closed) return
      closed = true
      client.close()
    }
    return {
      adapter: 'glide',
      raw: client,
      // DUMP's payload is binary: as bytes (ioredis and node-redis give it as a string, compared only with itself).
      command: async (...args) =>
        flatMaps(await client.customCommand(args.map(String), String(args[0]).toUpperCase() === 'DUMP' ? { decoder: Decoder.Bytes } : undefined)),
      quit: close,
      disconnect: close,
    }
  },
}

/** A GLIDE cluster client on the cluster whose seed nodes are `urls`. */
export async function connectGlideCluster(urls: readonly string[]): Promise<GlideClusterClient> {
  Logger.setLoggerConfig('off')
  return GlideClusterClient.createClient({ addresses: urls.map(glideAddress), requestTimeout: 5_000 })
}

const every: readonly ClientAdapter[] = [ioredis, nodeRedis, glide]

/**
 * The adapters the per-client suites run with: ioredis and node-redis, or those FENCELOCK_ADAPTERS
 * names (`FENCELOCK_ADAPTERS=glide npx vitest run test/...`). GLIDE is not in the default set:
 * a third run of every suite would not fit `npm test`'s time; test/redis/glide.test.ts runs the
 * core suites with it there, and `npm run test:glide` runs every per-client suite with it.
 */
export const adapters: readonly ClientAdapter[] = (process.env.FENCELOCK_ADAPTERS ?? 'ioredis,node-redis').split(',').map((name) => adapterNamed(name.trim()))

export function adapterNamed(name: string): ClientAdapter {
  const adapter = every.find((a) => a.name === name)
  if (!adapter) throw new Error(`unknown client adapter ${JSON.stringify(name)} (expected ${every.map((a) => a.name).join(', ')})`)
  return adapter
}
