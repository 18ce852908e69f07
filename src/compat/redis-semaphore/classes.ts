// redis-semaphore's six classes over fencelock's adapters and scripts, in the peer's key layout
// (`mutex:<key>`, `semaphore:<key>`), with the peer's argument checks and messages.
import type { Exec } from '../../lua/binding.js'
import { defaultTimeoutOptions, Lock, type LockOptions } from './lock.js'
import type { RedisClient } from '../../redis/client-types.js'
import type { SharedSubscriber } from '../../redis/subscriber.js'
import { connectionOf, execOn, mutexStore, redlockStore, semaphoreStore, type EvalClient, type Granted, type Store } from './stores.js'
import { Waker } from './wake.js'

/**
 * What the constructors take, checked at compile time as redis-semaphore 5.8 checks its ioredis
 * client: any client fencelock has an adapter for (ioredis, iovalkey, node-redis, Valkey GLIDE),
 * or any other client with ioredis' `evalsha` and `eval` (as redis-semaphore accepts one). A
 * constructor also takes `null`, to refuse it at run time with the peer's message ("client" is
 * required), which code written for redis-semaphore may test.
 */
export type RedisSemaphoreClient = RedisClient | EvalClient

function checkKey(key: unknown): asserts key is string {
  if (!key) throw new Error('"key" is required')
  if (typeof key !== 'string') throw new Error('"key" must be a string')
}

function checkCount(value: unknown, name: 'limit' | 'permits'): asserts value is number {
  if (!value) throw new Error(`"${name}" is required`)
  if (typeof value !== 'number') throw new Error(`"${name}" must be a number`)
}

/** redis-semaphore's `Mutex`: one holder of `mutex:<key>` at a time, on one Redis (or a Cluster). */
export class Mutex extends Lock {
  protected _kind = 'mutex'
  protected _key: string
  protected _client: RedisSemaphoreClient
  #exec: Exec
  #subscriber: () => SharedSubscriber | undefined
  #store: Store | undefined

  constructor(client: RedisSemaphoreClient | null, key: string, options?: LockOptions) {
    super(options)
    if (!client) throw new Error('"client" is required')
    checkKey(key)
    this._client = client as RedisSemaphoreClient
    this._key = `mutex:${key}`
    const connection = connectionOf(client)
    this.#exec = connection.exec
    this.#subscriber = connection.subscriber
  }

  protected override _waker(): Waker | undefined {
    const subscriber = this.#subscriber()
    return subscriber && new Waker(subscriber, this.#ops.channel)
  }

  protected _makeStore(): Store {
    return mutexStore(this._key)
  }

  get #ops(): Store {
    this.#store ??= this._makeStore()
    return this.#store
  }

  /** This lock's place in the upgraded waiters' line: its permits and identifier. */
  protected _waiter(): string {
    return `1|${this._identifier}`
  }

  protected _attempt(remaining: number): Promise<Granted> {
    const { lockTimeout, retryInterval } = this._acquireOptions
    return this.#ops.acquire(this.#exec, this._identifier, lockTimeout, { waiter: this._waiter(), remaining, retryInterval })
  }

  protected override _leave(): Promise<void> {
    return this.#ops.leave(this.#exec, this._waiter())
  }

  protected _refresh(): Promise<boolean> {
    return this.#ops.refresh(this.#exec, this._identifier, this._acquireOptions.lockTimeout)
  }

  protected _release(): Promise<void> {
    return this.#ops.release(this.#exec, this._identifier)
  }
}

/** redis-semaphore's `Semaphore`: at most `limit` holders of `semaphore:<key>`. */
export class Semaphore extends Mutex {
  protected override _kind = 'semaphore'
  protected _limit: number

  constructor(client: RedisSemaphoreClient | null, key: string, limit: number, options?: LockOptions) {
    super(client, key, options)
    checkCount(limit, 'limit')
    this._key = `semaphore:${key}`
    this._limit = limit
  }

  protected override _makeStore(): Store {
    return semaphoreStore(this._key, this._limit, 0)
  }
}

/** redis-semaphore's `MultiSemaphore`: `permits` of `limit` at once, all or none. */
export class MultiSemaphore extends Semaphore {
  protected override _kind = 'multi-semaphore'
  protected _permits: number

  constructor(client: RedisSemaphoreClient | null, key: string, limit: number, permits: number, options?: LockOptions) {
    super(client, key, limit, options)
    checkCount(permits, 'permits')
    this._permits = permits
  }

  protected override _makeStore(): Store {
    return semaphoreStore(this._key, this._limit, this._permits)
  }

  protected override _waiter(): string {
    return `${this._permits}|${this._identifier}`
  }
}

/** redis-semaphore's `RedlockMutex`: a mutex held on a majority of independent Redis nodes. */
export class RedlockMutex extends Lock {
  protected _kind = 'redlock-mutex'
  protected _key: string
  protected _clients: RedisSemaphoreClient[]
  #nodes: Exec[]
  #store: ReturnType<typeof redlockStore> | undefined

  constructor(clients: RedisSemaphoreClient[], key: string, options: LockOptions = defaultTimeoutOptions) {
    super(options)
    if (!clients || !Array.isArray(clients)) throw new Error('"clients" array is required')
    checkKey(key)
    this._clients = clients
    this._key = `mutex:${key}`
    this.#nodes = clients.map(execOn)
  }

  protected _makeStore(): Store {
    return mutexStore(this._key)
  }

  get #ops(): ReturnType<typeof redlockStore> {
    this.#store ??= redlockStore(this._makeStore(), this.#nodes)
    return this.#store
  }

  protected _attempt(): Promise<Granted> {
    return this.#ops.acquire(this._identifier, this._acquireOptions.lockTimeout)
  }

  protected _refresh(): Promise<boolean> {
    return this.#ops.refresh(this._identifier, this._acquireOptions.lockTimeout)
  }

  protected _release(): Promise<void> {
    return this.#ops.release(this._identifier)
  }
}

/** redis-semaphore's `RedlockSemaphore`. */
export class RedlockSemaphore extends RedlockMutex {
  protected override _kind = 'redlock-semaphore'
  protected _limit: number

  constructor(clients: RedisSemaphoreClient[], key: string, limit: number, options?: LockOptions) {
    super(clients, key, options)
    checkCount(limit, 'limit')
    this._key = `semaphore:${key}`
    this._limit = limit
  }

  protected override _makeStore(): Store {
    return semaphoreStore(this._key, this._limit, 0)
  }
}

/** redis-semaphore's `RedlockMultiSemaphore`. */
export class RedlockMultiSemaphore extends RedlockSemaphore {
  protected override _kind = 'redlock-multi-semaphore'
  protected _permits: number

  constructor(clients: RedisSemaphoreClient[], key: string, limit: number, permits: number, options?: LockOptions) {
    super(clients, key, limit, options)
    checkCount(permits, 'permits')
    this._permits = permits
  }

  protected override _makeStore(): Store {
    return semaphoreStore(this._key, this._limit, this._permits)
  }
}
