// The Redis clients that `createLocks`, `fencedSet` and `claimFence` accept, as structural types:
// the members fencelock calls, and nothing from the client packages themselves, so that fencelock
// never loads (or depends on the types of) a client library the user did not install. Parameter
// types are deliberately loose (`any`): each client major declares its own overloads, and these
// shapes only have to tell a client from a URL string or a plain object at compile time. The
// adapters (ioredis.ts, node-redis.ts) keep their own, precise views of the same clients, and
// adapterFor (index.ts) checks the shape again at run time for callers without types.

/**
 * An ioredis (5 or 6) `Redis` or `Cluster`, a `Redis` connected through Sentinel
 * (`new Redis({ sentinels, name })`), or iovalkey's `Redis` / `Cluster` (same API).
 */
export interface IORedisClient {
  /** The connection state; `'end'` means closed for good (calls then fail with `ClosedError`). */
  readonly status: string
  /** Runs a cached script: every lock operation is one script call. */
  evalsha(...args: any[]): Promise<unknown>
  /** Loads and runs a script when the server's script cache does not have it (`NOSCRIPT`). */
  eval(...args: any[]): Promise<unknown>
  /** Sends other commands (`WAIT` after a write when `replicas` is set). */
  call(...args: any[]): Promise<unknown>
  /** Makes fencelock's one pub/sub connection per client, with the same address, TLS and auth. */
  duplicate(...args: any[]): unknown
  /** Subscribes the duplicated connection to the wake-up channels. */
  subscribe(...args: any[]): Promise<unknown>
  /** Unsubscribes the duplicated connection once nobody waits on a channel. */
  unsubscribe(...args: any[]): Promise<unknown>
  /** Listens on the duplicated connection (messages, ready after a reconnect, errors). */
  on(event: any, listener: (...args: any[]) => void): unknown
  /** Closes the duplicated connection on `locks.close()`; your own client is never closed. */
  disconnect(...args: any[]): void
}

/** A node-redis (4, 5 or 6) client from `createClient()`, connected or about to be. */
export interface NodeRedisClient {
  /** False once the client was closed (calls then fail with `ClosedError`). */
  readonly isOpen: boolean
  /** Sends fencelock's script calls (`EVALSHA`, `EVAL` on `NOSCRIPT`) and other commands. */
  sendCommand(args: any, options?: any): Promise<unknown>
  /** Makes fencelock's one pub/sub connection per client, with the same address, TLS and auth. */
  duplicate(...args: any[]): unknown
  /** Connects the duplicated connection. */
  connect(): Promise<unknown>
  /** Subscribes the duplicated connection to the wake-up channels. */
  subscribe(...args: any[]): Promise<unknown>
  /** Unsubscribes the duplicated connection once nobody waits on a channel. */
  unsubscribe(...args: any[]): Promise<unknown>
  /** Listens on the duplicated connection (ready, reconnects, errors). */
  on(event: any, listener: (...args: any[]) => void): unknown
}

/** A node-redis (4, 5 or 6) cluster client from `createCluster()`. */
export interface NodeRedisCluster {
  /** False once the client was closed (calls then fail with `ClosedError`). */
  readonly isOpen: boolean
  /** The cluster's masters; its presence tells a cluster client from a single-node one. */
  readonly masters: readonly unknown[]
  /** Sends fencelock's script calls to the node that owns the first key's slot. */
  sendCommand(firstKey: any, isReadonly: any, args: any, options?: any): Promise<unknown>
  /** Makes fencelock's one pub/sub connection per client, with the same nodes, TLS and auth. */
  duplicate(...args: any[]): unknown
  /** Connects the duplicated connection. */
  connect(): Promise<unknown>
  /** Subscribes the duplicated connection to the wake-up channels. */
  subscribe(...args: any[]): Promise<unknown>
  /** Unsubscribes the duplicated connection once nobody waits on a channel. */
  unsubscribe(...args: any[]): Promise<unknown>
  /** Listens on the duplicated connection (ready, reconnects, errors). */
  on(event: any, listener: (...args: any[]) => void): unknown
}

/** A node-redis (5 or 6) sentinel client from `createSentinel()`: commands go to the current master. */
export interface NodeRedisSentinel {
  /** False once the client was closed (calls then fail with `ClosedError`). */
  readonly isOpen: boolean
  /** Sends fencelock's script calls and other commands to the current master. */
  sendCommand(isReadonly: any, args: any, options?: any): Promise<unknown>
  /** Its presence tells a sentinel client from the others. */
  getMasterNode(): unknown
  /** Subscribes to the wake-up channels (the sentinel client keeps its own pub/sub connection). */
  subscribe(...args: any[]): Promise<unknown>
  /** Unsubscribes once nobody waits on a channel. */
  unsubscribe(...args: any[]): Promise<unknown>
  /** Listens for master changes (`topology-change`): waiters then look again, messages may have been dropped. */
  on(event: any, listener: (...args: any[]) => void): unknown
  /** Removes that listener on `locks.close()`. */
  off(event: any, listener: (...args: any[]) => void): unknown
}

/**
 * A Valkey GLIDE (2.x) `GlideClient` or `GlideClusterClient` (`@valkey/valkey-glide`). fencelock
 * makes its pub/sub client with the same options (GLIDE configures a client's message callback when
 * it is created), so set GLIDE's `requestTimeout` above the `replicas` timeout when you use `WAIT`.
 */
export interface GlideClient {
  /** Sends fencelock's script calls (`EVALSHA`, `EVAL` on `NOSCRIPT`) and other commands. */
  customCommand(args: any, options?: any): Promise<unknown>
  /** Its presence (with `customCommand`) tells a GLIDE client from the others. */
  invokeScript(...args: any[]): Promise<unknown>
  /** Closes fencelock's pub/sub client on `locks.close()`; your own client is never closed. */
  close(...args: any[]): void
}

/** Any Redis client fencelock accepts: ioredis, iovalkey, node-redis (single node, cluster or sentinel) or Valkey GLIDE. */
export type RedisClient = IORedisClient | NodeRedisClient | NodeRedisCluster | NodeRedisSentinel | GlideClient
