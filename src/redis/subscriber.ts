import type { RedisAdapter, SubscriberConnection } from './adapter.js'

type Listener = (message: string) => void

interface Channel {
  listeners: Set<Listener>
  /** Resolves with the performance.now() at which SUBSCRIBE was acknowledged. */
  subscribed: Promise<number>
  linger: NodeJS.Timeout | undefined
}

/**
 * One pub/sub connection per Redis client, shared by every waiter of every `createLocks` on it.
 * It is opened by the first waiter, channels stay subscribed a little after their last listener
 * leaves (a busy resource would otherwise SUBSCRIBE/UNSUBSCRIBE on every handoff), and the
 * connection closes once nothing has listened for `lingerMs`, so it never keeps a process alive.
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
      const subscribed = this.#connect()
        .then((c) => c.subscribe(channel))
        .then(() => performance.now())
      entry = { listeners: new Set(), subscribed, linger: undefined }
      this.#channels.set(channel, entry)
      subscribed.catch(() => {
        if (this.#channels.get(channel)?.subscribed === subscribed) this.#channels.delete(channel)
      })
    }
    entry.listeners.add(listener)
    return entry.subscribed
  }

  unlisten(channel: string, listener: Listener): void {
    const entry = this.#channels.get(channel)
    if (!entry || !entry.listeners.delete(listener) || entry.listeners.size > 0) return
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
    if (connection) await connection.then((c) => c.close(), () => {})
  }

  #connect(): Promise<SubscriberConnection> {
    if (!this.#connection) {
      const connection = this.#adapter.createSubscriber().then((c) => {
        c.onMessage((channel, message) => {
          const entry = this.#channels.get(channel)
          if (entry) for (const listener of entry.listeners) listener(message)
        })
        c.onReconnect(() => {
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
