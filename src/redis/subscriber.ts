import { leaving, type RedisAdapter, type SubscriberConnection } from './adapter.js'

const never = (): boolean => false

type Listener = (message: string) => void

interface Channel {
  listeners: Set<Listener>
  /** Resolves with the performance.now() at which SUBSCRIBE was acknowledged. */
  subscribed: Promise<number>
  active: boolean
  linger: NodeJS.Timeout | undefined
}

/** A SUBSCRIBE not acknowledged within this is taken as a dead connection: a new one replaces it. */
const SUBSCRIBE_TIMEOUT_MS = 2_000

/**
 * One pub/sub connection per Redis client, shared by every waiter of every `createLocks` on it.
 * It is opened by the first waiter, channels stay subscribed a little after their last listener
 * leaves (a busy resource would otherwise SUBSCRIBE/UNSUBSCRIBE on every handoff), and the
 * connection closes once nothing has listened for `lingerMs`, so it never keeps a process alive.
 *
 * Client libraries can leave a pub/sub connection deaf (node-redis 5 after a reset while it
 * connects; ioredis after a failed ready check). So a SUBSCRIBE that is not acknowledged in time
 * replaces the connection, re-subscribes every channel on the new one, and then tells the waiters
 * to look again, since messages may have been missed.
 */
export class SharedSubscriber {
  readonly #adapter: RedisAdapter
  readonly #lingerMs: number
  #connection: Promise<SubscriberConnection> | undefined
  readonly #channels = new Map<string, Channel>()
  readonly #resync = new Set<() => void>()
  #idle: NodeJS.Timeout | undefined
  #users = 0

  constructor(adapter: RedisAdapter, lingerMs = 2_000) {
    this.#adapter = adapter
    this.#lingerMs = lingerMs
  }

  /**
   * Resolves once SUBSCRIBE is acknowledged, with the `performance.now()` of that moment: no
   * message published after it is missed. A caller that sent a request before that moment must
   * look again, since a message published in between went unheard.
   */
  listen(channel: string, listener: Listener): Promise<number> {
    clearTimeout(this.#idle)
    let entry = this.#channels.get(channel)
    if (entry) {
      clearTimeout(entry.linger)
      entry.linger = undefined
    } else {
      entry = { listeners: new Set(), subscribed: Promise.resolve(0), active: false, linger: undefined }
      this.#channels.set(channel, entry)
      this.#subscribe(channel, entry)
    }
    entry.listeners.add(listener)
    return entry.subscribed
  }

  hasChannels(): boolean {
    return this.#channels.size > 0
  }

  isActive(channel: string): boolean {
    return this.#channels.get(channel)?.active === true
  }

  unlisten(channel: string, listener: Listener): void {
    const entry = this.#channels.get(channel)
    if (!entry?.listeners.delete(listener) || entry.listeners.size > 0) return
    entry.linger = setTimeout(() => this.#drop(channel), this.#lingerMs)
    entry.linger.unref()
  }

  /** `listener` runs after the connection was re-established: messages may have been missed. */
  onResync(listener: () => void): () => void {
    this.#resync.add(listener)
    return () => this.#resync.delete(listener)
  }

  /** Each `createLocks` instance retains the subscriber once; the last `release()` closes it. */
  retain(): void {
    this.#users++
  }

  release(): Promise<void> {
    this.#users = Math.max(0, this.#users - 1)
    return this.#users === 0 ? this.close() : Promise.resolve()
  }

  async close(): Promise<void> {
    clearTimeout(this.#idle)
    for (const entry of this.#channels.values()) clearTimeout(entry.linger)
    this.#channels.clear()
    const connection = this.#connection
    this.#connection = undefined
    if (connection)
      await connection.then(
        (c) => c.close(),
        () => {},
      )
  }

  #subscribe(channel: string, entry: Channel): void {
    entry.active = false
    const connection = this.#connect()
    const subscribed = connection.then(
      (c) =>
        new Promise<number>((resolve, reject) => {
          const timer = setTimeout(() => {
            reject(new Error(`SUBSCRIBE ${channel} was not acknowledged within ${SUBSCRIBE_TIMEOUT_MS} ms`))
            this.#replace(connection)
          }, SUBSCRIBE_TIMEOUT_MS)
          timer.unref() // a watchdog, never a reason to keep the process alive
          c.subscribe(channel).then(
            () => {
              clearTimeout(timer)
              if (entry.subscribed === subscribed) entry.active = true
              resolve(performance.now())
            },
            (err: unknown) => {
              clearTimeout(timer)
              // Its own connection, never the user's: a refusal (no SUBSCRIBE in the ACL) or transient.
              reject(leaving(err, never))
            },
          )
        }),
    )
    entry.subscribed = subscribed
    subscribed.catch(() => {
      // Forget a channel whose SUBSCRIBE failed, unless a new connection is already retrying it.
      if (this.#channels.get(channel)?.subscribed === subscribed) this.#channels.delete(channel)
    })
  }

  /** Drops a deaf connection; every channel still listened to is subscribed again on a new one. */
  #replace(deaf: Promise<SubscriberConnection>): void {
    if (this.#connection !== deaf) return // already replaced
    this.#connection = undefined
    void deaf.then(
      (c) => c.close(),
      () => {},
    )
    const again = [...this.#channels].filter(([, entry]) => entry.listeners.size > 0)
    for (const [channel, entry] of again) this.#subscribe(channel, entry)
    void Promise.allSettled(again.map(([, entry]) => entry.subscribed)).then(() => {
      for (const listener of this.#resync) listener()
    })
  }

  #connect(): Promise<SubscriberConnection> {
    if (!this.#connection) {
      const connection = this.#adapter.createSubscriber().then((c) => {
        c.onMessage((channel, message) => {
          // Only the current connection speaks: a replaced one may still deliver stragglers twice.
          if (this.#connection !== connection) return
          const entry = this.#channels.get(channel)
          if (entry) for (const listener of entry.listeners) listener(message)
        })
        c.onReconnect(() => {
          if (this.#connection !== connection) return
          for (const listener of this.#resync) listener()
        })
        return c
      })
      connection.catch(() => {
        if (this.#connection === connection) this.#connection = undefined
      })
      this.#connection = connection
    }
    return this.#connection
  }

  #drop(channel: string): void {
    const entry = this.#channels.get(channel)
    if (!entry || entry.listeners.size > 0) return
    this.#channels.delete(channel)
    this.#connection?.then((c) => c.unsubscribe(channel)).catch(() => {})
    if (this.#channels.size === 0) {
      this.#idle = setTimeout(() => void this.close(), this.#lingerMs)
      this.#idle.unref()
    }
  }
}

const shared = new WeakMap<RedisAdapter, SharedSubscriber>()

export function subscriberFor(adapter: RedisAdapter): SharedSubscriber {
  let sub = shared.get(adapter)
  if (!sub) {
    sub = new SharedSubscriber(adapter)
    shared.set(adapter, sub)
  }
  return sub
}
