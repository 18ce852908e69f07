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
  readonly status: string
  evalsha(...args: any[]): Promise<unknown>
  eval(...args: any[]): Promise<unknown>
  call(...args: any[]): Promise<unknown>
  duplicate(...args: any[]): unknown
  subscribe(...args: any[]): Promise<unknown>
  unsubscribe(...args: any[]): Promise<unknown>
  on(event: any, listener: (...args: any[]) => void): unknown
  disconnect(...args: any[]): void
}

/** A node-redis (4, 5 or 6) client from `createClient()`, connected or about to be. */
export interface NodeRedisClient {
  readonly isOpen: boolean
  sendCommand(args: any, options?: any): Promise<unknown>
  duplicate(...args: any[]): unknown
  connect(): Promise<unknown>
  subscribe(...args: any[]): Promise<unknown>
  unsubscribe(...args: any[]): Promise<unknown>
  on(event: any, listener: (...args: any[]) => void): unknown
}

/** A node-redis (4, 5 or 6) cluster client from `createCluster()`. */
export interface NodeRedisCluster {
  readonly isOpen: boolean
  readonly masters: readonly unknown[]
  sendCommand(firstKey: any, isReadonly: any, args: any, options?: any): Promise<unknown>
  duplicate(...args: any[]): unknown
  connect(): Promise<unknown>
  subscribe(...args: any[]): Promise<unknown>
  unsubscribe(...args: any[]): Promise<unknown>
  on(event: any, listener: (...args: any[]) => void): unknown
}

/** A node-redis (5 or 6) sentinel client from `createSentinel()`: commands go to the current master. */
export interface NodeRedisSentinel {
  readonly isOpen: boolean
  sendCommand(isReadonly: any, args: any, options?: any): Promise<unknown>
  getMasterNode(): unknown
  subscribe(...args: any[]): Promise<unknown>
  unsubscribe(...args: any[]): Promise<unknown>
  on(event: any, listener: (...args: any[]) => void): unknown
  off(event: any, listener: (...args: any[]) => void): unknown
}

/** Any Redis client fencelock accepts: ioredis, iovalkey or node-redis; single node, cluster or sentinel. */
export type RedisClient = IORedisClient | NodeRedisClient | NodeRedisCluster | NodeRedisSentinel
