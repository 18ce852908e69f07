import { isRefused } from '../errors/redis-failure.js'
import type { WakeReason } from '../util/telemetry.js'
import { activeSince, FAILED, type Subscription, type WaitHooks, type Waiter } from './waiter.js'

/** A fast-path attempt in flight for waiter `id` (none for `wait: 0`); `poked` (with why) if a release named it meanwhile. */
export interface Pending {
  readonly id: string | undefined
  poked: WakeReason | false
}

/** The waiters of one resource in this process (FIFO), and the subscription that wakes its head. */
export interface Queue {
  readonly resource: string
  /** Where this resource's wake-ups come (several for an all-or-nothing lock of several resources). */
  readonly channels: readonly string[]
  readonly waiters: Waiter[]
  readonly listener: (message: string) => void
  /** The subscription: resolves once it is active (and since when), or failed. */
  listening: Promise<Subscription> | undefined
  /** Redis refused SUBSCRIBE (an ACL without it): waiting would poll in silence, so waiters fail. */
  refused: unknown
  /** A fast-path attempt in flight for waiter `id`; `poked` if a release named it meanwhile. */
  pending: Pending | undefined
  /** The serve loop runs (it starts once the fast path, if any, has returned). */
  serving: boolean
}

/** Resolves once every channel of the queue is subscribed, with the latest moment one became active, or failed if one failed. */
export function listen(hooks: WaitHooks, queue: Queue): Promise<Subscription> {
  hooks.subscribing()
  hooks.listened.ever = true
  const wake = hooks.wake
  const failed = (err: unknown): Subscription => {
    if (isRefused(err)) queue.refused = err
    return FAILED
  }
  if (queue.channels.length === 1) return wake.listen(queue.channels[0]!, queue.listener).then(activeSince, failed)
  return Promise.all(queue.channels.map((channel) => wake.listen(channel, queue.listener))).then((at) => activeSince(Math.max(...at)), failed)
}
