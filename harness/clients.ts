// One real client per supported library, so a suite can run once per adapter:
//   describe.each(adapters)('... ($name)', (adapter) => { ... })
// Fault tests kill, pause and restart servers under these clients: every client swallows its
// 'error' events (an unhandled one would crash the test process) and can be torn down by force.
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import type { RedisClient } from '../src/index.js'

export type AdapterName = 'ioredis' | 'node-redis'

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
  /**
   * Opens a new connection in place of the current one, on the same client object (so a locks
   * instance built on it keeps it). For a client library that failed to reconnect by itself.
   */
  reopen(): Promise<void>
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
      async reopen() {
        client.disconnect(true)
        await new Promise<void>((resolve) => client.once('ready', () => resolve()))
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
      async reopen() {
        // destroy() and connect() in one tick: the client is never seen closed in between.
        if (client.isOpen) client.destroy()
        await client.connect()
      },
      async disconnect() {
        if (client.isOpen) client.destroy()
      },
    }
  },
}

export const adapters: readonly ClientAdapter[] = [ioredis, nodeRedis]

export function adapterNamed(name: string): ClientAdapter {
  const adapter = adapters.find((a) => a.name === name)
  if (!adapter) throw new Error(`unknown client adapter ${JSON.stringify(name)} (expected ${adapters.map((a) => a.name).join(' or ')})`)
  return adapter
}
