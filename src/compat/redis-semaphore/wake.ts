// How an upgraded waiter waits for a lock that upgraded processes hold: on their release's
// PUBLISH (fencelock's shared pub/sub connection of the client), not by polling every
// retryInterval; bounded by the lock's expiry in case a message is missed.
import type { SharedSubscriber } from '../../redis/subscriber.js'

/** redis-semaphore's delay: rejects with the signal's reason when it aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal!.reason as Error)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    if (signal?.aborted) return onAbort()
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

export class Waker {
  readonly #subscriber: SharedSubscriber
  readonly #channel: string
  #listening = false
  /** SUBSCRIBE acknowledged: from then on no release is missed. */
  #active = false
  /** A release was heard since the last attempt was sent. */
  #rang = false
  #wake: (() => void) | undefined
  readonly #listener = () => {
    this.#rang = true
    this.#wake?.()
  }

  constructor(subscriber: SharedSubscriber, channel: string) {
    this.#subscriber = subscriber
    this.#channel = channel
  }

  /** Before each attempt: a release heard from now on ends the next wait at once. */
  arm(): void {
    this.#rang = false
  }

  /**
   * True when waiting for a release is safe now; false when this call just began listening (an
   * attempt sent before went unheard: look again at once), or the subscription is not up yet
   * (then it has waited `patience` ms, as a poll does). Never waits longer than that for the SUBSCRIBE.
   */
  async ready(patience: number, signal?: AbortSignal): Promise<boolean> {
    if (this.#active) return true
    if (this.#listening) {
      await delay(patience, signal)
      return false
    }
    this.#listening = true
    const subscribed = this.#subscriber.listen(this.#channel, this.#listener).then(
      () => void (this.#active = this.#listening),
      () => void (this.#listening = false),
    )
    await Promise.race([subscribed, delay(patience)])
    return false
  }

  /** Until a release is heard, `ms` pass, or `signal` aborts (rejects with its reason, as redis-semaphore's delay does). */
  wait(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const finish = (err?: unknown) => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        this.#wake = undefined
        if (err === undefined) resolve()
        else reject(err)
      }
      const onAbort = () => finish(signal!.reason)
      const timer = setTimeout(() => finish(), Math.max(0, ms))
      if (signal?.aborted) return onAbort()
      if (this.#rang) return finish()
      this.#wake = () => finish()
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }

  close(): void {
    if (this.#listening) this.#subscriber.unlisten(this.#channel, this.#listener)
    this.#listening = false
    this.#active = false
  }
}
