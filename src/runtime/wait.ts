import { LockAbortedError, type FencelockError } from '../errors/errors.js'
import { subscribeRefused, waitError } from '../errors/failures.js'
import { whenAborted } from '../util/abort.js'
import type { WakeReason } from '../util/telemetry.js'
import type { LeaseState } from './lease-state.js'
import { wakeFor } from '../topology/wake-message.js'
import { listen, type Pending, type Queue } from './wait-queue.js'
import { afterRefusal, sleepUnlessWoken, untilWoken, WOKEN, type TryResult, type WaitHooks, type Waiter } from './waiter.js'

/**
 * Event-driven waiting. Waiters of one resource in this process queue FIFO; only the head talks to
 * Redis, where it holds one place in the resource's fair queue. A release publishes the id of the
 * next waiter in line, which wakes exactly that head; a timer bounded by the holder's remaining
 * ttl (or the waiter ahead's expiry) covers a crashed holder or a lost message. No polling.
 */
export class WaitQueues {
  readonly #hooks: WaitHooks
  readonly #queues = new Map<string, Queue>()
  readonly #unresync: () => void
  /** Fast-path attempts in flight on resources that have no queue (see `begin`). */
  readonly #pending = new Map<string, Pending>()
  /** Heads woken while their attempt was in flight: they look again instead of going to sleep. */
  readonly #poked = new WeakSet<Waiter>()

  constructor(hooks: WaitHooks) {
    this.#hooks = hooks
    // After a subscriber reconnect, messages may have been missed: every head looks again.
    this.#unresync = hooks.wake.onResync(() => {
      for (const queue of this.#queues.values()) {
        const head = queue.waiters[0]
        if (head) this.#poke(head, 'resync')
        else if (queue.pending) queue.pending.poked = 'resync'
      }
    })
  }

  /** True if this process already has waiters for `resource` (a newcomer must queue behind them). */
  has(resource: string): boolean {
    return this.#queues.has(resource) || this.#pending.has(resource)
  }

  /**
   * A fast-path attempt for waiter `id` is about to be sent: from now on newcomers of this process
   * queue behind it, and if the channel is already subscribed (from an earlier wait), a release
   * that names `id` while the attempt is in flight is kept, not dropped. Follow with `enqueue` (the
   * attempt failed and the waiter waits) or `end` (done).
   */
  begin(resource: string, id: string | undefined): void {
    const pending: Pending = { id, poked: false }
    // The common, uncontended case stays a single map entry: no queue, no listener (and while
    // this instance has never listened to a wake-up channel, or no channel is subscribed at all,
    // not even the channel names are looked up).
    const wake = this.#hooks.wake
    if (
      !this.#hooks.listened.ever ||
      wake.isActive === undefined ||
      wake.hasChannels?.() === false ||
      !this.#hooks.channels(resource).every((channel) => wake.isActive?.(channel))
    )
      return void this.#pending.set(resource, pending)
    const queue = this.#create(resource)
    queue.pending = pending
    queue.listening = listen(this.#hooks, queue)
  }

  /** The fast path is over without a waiter to queue: serve whoever queued behind it meanwhile. */
  end(resource: string): void {
    if (this.#pending.delete(resource)) return
    const queue = this.#queues.get(resource)
    if (!queue?.pending) return
    queue.pending = undefined
    this.#start(queue, undefined)
  }

  /**
   * Queues `waiter`. `first` is the outcome of its fast-path attempt (see `begin`), if it made
   * one: it then goes first. Resolves with its lease or rejects with a typed error at its
   * deadline, abort or close.
   */
  enqueue(waiter: Waiter, first?: TryResult): void {
    // Its fast-path attempt joined the Redis queue under its id: it must leave if it gives up.
    if (first && !('lease' in first)) waiter.queued = true
    this.#arm(waiter)
    const queue = this.#queues.get(waiter.resource) ?? this.#create(waiter.resource)
    const pending = queue.pending
    if (pending !== undefined && pending.id === waiter.id) {
      if (pending.poked) {
        waiter.woken = pending.poked
        this.#poked.add(waiter)
      }
      queue.pending = undefined
      queue.waiters.unshift(waiter)
      this.#start(queue, first)
    } else {
      queue.waiters.push(waiter)
      if (!queue.pending) this.#start(queue, undefined)
    }
  }

  #create(resource: string): Queue {
    const existing = this.#queues.get(resource)
    if (existing) return existing
    const queue: Queue = {
      resource,
      channels: this.#hooks.channels(resource),
      waiters: [],
      listener: (message) => {
        const head = queue.waiters[0]
        const id = head ? head.id : queue.pending?.id
        if (id === undefined) return
        const wake = wakeFor(message, id)
        if (wake === 'next') {
          if (head) this.#poke(head, 'release')
          else queue.pending!.poked = 'release'
        } else if (wake === 'standby' && head) this.#standby(head)
      },
      listening: undefined,
      refused: undefined,
      // A fast-path attempt already in flight (begin) goes first once it fails.
      pending: this.#pending.get(resource),
      serving: false,
    }
    this.#pending.delete(resource)
    this.#queues.set(resource, queue)
    return queue
  }

  #start(queue: Queue, first: TryResult | undefined): void {
    if (queue.serving) return
    if (queue.waiters.length === 0) return this.#drop(queue)
    queue.serving = true
    void this.#serve(queue, first)
  }

  #drop(queue: Queue): void {
    this.#queues.delete(queue.resource)
    if (queue.listening) for (const channel of queue.channels) this.#hooks.wake.unlisten(channel, queue.listener)
  }

  /** Rejects every waiter (locks.close()). */
  closeAll(err: FencelockError): void {
    this.#unresync()
    for (const queue of this.#queues.values()) for (const waiter of [...queue.waiters]) this.#fail(waiter, err)
  }

  #arm(waiter: Waiter): void {
    if (Number.isFinite(waiter.deadline)) {
      const timer = setTimeout(() => this.#expire(waiter), Math.max(0, Math.ceil(waiter.deadline - performance.now())))
      waiter.timers.push(timer)
    }
    // Aborted before it could be armed (while its fast-path attempt was returning): settled now.
    const signal = waiter.signal
    if (signal) waiter.unlistenAbort = whenAborted(signal, () => this.#fail(waiter, new LockAbortedError(waiter.resource, signal.reason)))
  }

  /**
   * A wake-up for `waiter`. One that lands while its attempt is in flight (that attempt may have
   * run before the release that sent it) must not be lost, or the head sleeps a whole ttl while
   * the lock is free and everyone queued behind it waits too.
   */
  /** The waiter is next after a woken one: look again after that one's grace, unless woken first. */
  #standby(waiter: Waiter): void {
    if (waiter.standby) return
    waiter.standby = setTimeout(() => {
      waiter.standby = undefined
      this.#poke(waiter, 'standby')
    }, this.#hooks.grace + 50)
  }

  #poke(waiter: Waiter, why: WakeReason): void {
    waiter.woken = why
    if (waiter.wake) waiter.wake()
    else this.#poked.add(waiter)
  }

  #expire(waiter: Waiter): void {
    this.#fail(waiter, waitError(waiter.resource, performance.now() - waiter.started, waiter.lastError))
  }

  /** The waiter got its lease. */
  #grant(waiter: Waiter, lease: LeaseState): void {
    if (!this.#finish(waiter)) return
    waiter.wake?.()
    waiter.resolve(lease)
  }

  /** The waiter ends with `err` (deadline, abort, close, a refusal): it gives up its place in Redis. */
  #fail(waiter: Waiter, err: unknown): void {
    if (!this.#finish(waiter)) return
    if (waiter.queued) this.#hooks.leave(waiter)
    waiter.wake?.()
    waiter.reject(err)
  }

  /** Stops the waiter's timers and takes it out of line; false if it was already settled. */
  #finish(waiter: Waiter): boolean {
    if (waiter.settled) return false
    waiter.settled = true
    for (const timer of waiter.timers) clearTimeout(timer)
    waiter.timers.length = 0
    clearTimeout(waiter.standby)
    waiter.unlistenAbort?.()
    const queue = this.#queues.get(waiter.resource)
    if (queue) {
      const at = queue.waiters.indexOf(waiter)
      // A head that is mid-attempt stays in place until its attempt returns (see #serve).
      if (at > 0) queue.waiters.splice(at, 1)
    }
    return true
  }

  async #serve(queue: Queue, first: TryResult | undefined): Promise<void> {
    let pending = first
    while (queue.waiters.length > 0) {
      const waiter = queue.waiters[0]!
      await this.#serveHead(queue, waiter, pending)
      pending = undefined
      if (queue.waiters[0] === waiter) queue.waiters.shift()
    }
    queue.serving = false
    this.#drop(queue)
  }

  /** Sends the head's next attempt; `why` (telemetry's `wakes`) is what sent it when nothing woke it. */
  #send(waiter: Waiter, why: WakeReason | undefined): Promise<TryResult> {
    if (waiter.stats && why) waiter.stats.wakes.push(waiter.woken ?? why)
    waiter.woken = undefined
    this.#poked.delete(waiter) // this attempt sees every release before it
    clearTimeout(waiter.standby)
    waiter.standby = undefined
    // Set before sending: if the waiter gives up while the attempt is in flight, the attempt
    // may still join the Redis queue, and the leave must follow it.
    waiter.queued = true
    return this.#hooks.attempt(waiter)
  }

  async #serveHead(queue: Queue, waiter: Waiter, first: TryResult | undefined): Promise<void> {
    let result = first
    let sentAt = waiter.started
    // Why the next attempt goes out when nothing woke the waiter (telemetry's `wakes`): the first
    // one of a waiter that queued behind another acquire of this process is its turn.
    let why: WakeReason | undefined = first ? undefined : 'turn'
    while (!waiter.settled) {
      // Also with a fast-path result in hand: an instance closed meanwhile must not subscribe now
      // (that connection would outlive close()).
      try {
        this.#hooks.checkOpen()
      } catch (err) {
        if (result && 'lease' in result) result.lease.giveBack()
        return this.#fail(waiter, err)
      }
      if (!result) {
        sentAt = performance.now()
        result = await this.#send(waiter, why)
      }
      if ('lease' in result) {
        if (waiter.settled)
          result.lease.giveBack() // gave up meanwhile: undo
        else this.#grant(waiter, result.lease)
        return
      }
      if (waiter.settled) return
      const next = afterRefusal(waiter, result)
      if ('error' in next) return this.#fail(waiter, next.error)
      const delay = next.delay
      why = 'error' in result ? 'backoff' : 'recheck'
      result = undefined
      if (!queue.listening) {
        queue.listening = listen(this.#hooks, queue)
        // Bounded by the re-check delay too: a SUBSCRIBE that is never answered must cost no more
        // than a lost message would (one ttl), not the whole wait.
        const subscription = await untilWoken(waiter, queue.listening, Math.min(delay, waiter.deadline - performance.now()))
        if (waiter.settled) return
        // Woken meanwhile, or subscribed after the attempt was sent (a release in between went
        // unheard): look again at once. A channel still subscribed from an earlier wait needs no
        // second look.
        if (subscription === WOKEN) continue
        if (!subscription.failed && subscription.since >= sentAt) {
          why = 'subscribed'
          continue
        }
        if (subscription.failed) {
          // Refused for good (no SUBSCRIBE permission): say so now rather than poll until the deadline.
          if (queue.refused !== undefined) return this.#fail(waiter, subscribeRefused(waiter.resource, queue.refused))
          // No pub/sub for now (Redis down?): rely on the re-check timer and subscribe next time round.
          // Stop listening where it did subscribe (some nodes of a quorum): the queue forgets it.
          for (const channel of queue.channels) this.#hooks.wake.unlisten(channel, queue.listener)
          queue.listening = undefined
        }
      }
      if (this.#poked.delete(waiter)) continue // woken while the attempt was in flight
      await sleepUnlessWoken(waiter, Math.min(delay, waiter.deadline - performance.now()))
    }
  }
}

export type { TryResult, WaitHooks, Waiter } from './waiter.js'
