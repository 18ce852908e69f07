import type { Into } from './into.js'

/** What `replyWithin` resolves to when its limit passed first. */
export const NO_REPLY: unique symbol = Symbol('no reply')

/**
 * One pending callback on the shared timeline. Owned and re-armed by whoever made it (a lease
 * keeps one for its expiry and one for its renewal), so re-arming allocates nothing.
 */
export class Alarm {
  /** `performance.now()` at which it fires. */
  due = 0
  /** Holds the process open while armed (an unanswered request does; a lease's timers do not). */
  readonly keepAlive: boolean
  /** Called with the alarm itself: a subclass passes one shared function, not a closure per alarm. */
  readonly fire: (alarm: Alarm) => void
  prev: Alarm | undefined = undefined
  next: Alarm | undefined = undefined
  lane: Lane | undefined = undefined

  constructor(fire: (alarm: Alarm) => void, keepAlive = false) {
    this.fire = fire
    this.keepAlive = keepAlive
  }

  get armed(): boolean {
    return this.lane !== undefined
  }
}

/** Alarms armed with the same delay: they come due in about the order they were armed. */
interface Lane {
  readonly key: number
  head: Alarm | undefined
  tail: Alarm | undefined
}

/** Alarms handled per turn of the event loop; the rest continue on the next turn. */
const SLICE = 250

/** Node's longest timer delay (2^31-1 ms, 24.8 days): a longer one fires after 1 ms instead. */
export const MAX_TIMER_DELAY = 2_147_483_647

/**
 * Every lease's expiry and renewal, and every request's reply limit, on ONE Node timer (armed for
 * the earliest alarm) instead of one `setTimeout` per lease or call, as Node's own timer lists do:
 * alarms of equal delay sit in one sorted lane (appending is O(1) as they come due in the order
 * they are armed), and the timer looks at the lanes' heads only. Arming and disarming allocate
 * nothing. An alarm fires at most 1 ms early and never late but for a busy event loop. The timer
 * never holds the process open unless an armed alarm asks for it (`keepAlive`).
 */
class Timeline {
  readonly #lanes = new Map<number, Lane>()
  /** The lane used last: nearly every call arms the same one again (no map lookup then). */
  #lastLane: Lane | undefined
  #timer: NodeJS.Timeout | undefined
  #timerDue = Infinity
  #keepAlive = 0
  #refd = false
  #draining = false
  /** A turn of the loop continues a flood of due alarms (see SLICE): no timer meanwhile. */
  #continuing = false

  /** Arms (or re-arms) `alarm` for `due`; `lane`: its delay class (alarms armed with equal delays). */
  set(alarm: Alarm, due: number, lane: number): void {
    if (alarm.lane) this.#unlink(alarm)
    alarm.due = due
    let l = this.#lastLane?.key === lane ? this.#lastLane : this.#lanes.get(lane)
    if (!l) {
      l = { key: lane, head: undefined, tail: undefined }
      this.#lanes.set(lane, l)
    }
    this.#lastLane = l
    // Insertion from the tail: nearly always it goes last.
    let after = l.tail
    while (after && after.due > due) after = after.prev
    alarm.lane = l
    alarm.prev = after
    alarm.next = after ? after.next : l.head
    if (alarm.next) alarm.next.prev = alarm
    else l.tail = alarm
    if (after) after.next = alarm
    else l.head = alarm
    if (alarm.keepAlive) this.#keepAlive++
    if (due < this.#timerDue && !this.#draining && !this.#continuing) this.#arm(due)
    else this.#ref()
  }

  /** Disarms `alarm` (nothing if it is not armed). The timer is left to find nothing due then. */
  cancel(alarm: Alarm): void {
    if (alarm.lane) this.#unlink(alarm)
  }

  #unlink(alarm: Alarm): void {
    const lane = alarm.lane!
    if (alarm.prev) alarm.prev.next = alarm.next
    else lane.head = alarm.next
    if (alarm.next) alarm.next.prev = alarm.prev
    else lane.tail = alarm.prev
    alarm.prev = alarm.next = alarm.lane = undefined
    // The timer stays armed (unref'd unless a keepAlive alarm is left): clearing it and arming a
    // new one for each short-lived alarm (a request's reply limit) would cost a Node timer per call.
    if (alarm.keepAlive && --this.#keepAlive === 0) this.#ref()
  }

  #arm(due: number): void {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timerDue = due
    // Capped at Node's longest timer (a longer delay fires at once): an alarm further out (a
    // node-redlock drop-in lock of years) is looked at again then, and found not yet due.
    this.#timer = setTimeout(this.#tick, Math.min(MAX_TIMER_DELAY, Math.max(1, Math.ceil(due - performance.now()))))
    this.#refd = true
    this.#ref()
  }

  /** The timer holds the process open exactly while a keepAlive alarm is armed. */
  #ref(): void {
    if (!this.#timer) return
    const want = this.#keepAlive > 0
    if (want === this.#refd) return
    this.#refd = want
    if (want) this.#timer.ref()
    else this.#timer.unref()
  }

  readonly #continue = (): void => {
    this.#continuing = false
    if (this.#timer) clearTimeout(this.#timer)
    this.#tick()
  }

  readonly #tick = (): void => {
    this.#timer = undefined
    this.#timerDue = Infinity
    this.#draining = true
    let fired = 0
    try {
      const now = performance.now() + 1
      for (;;) {
        let first: Alarm | undefined
        for (const lane of this.#lanes.values()) if (lane.head && lane.head.due <= now && (!first || lane.head.due < first.due)) first = lane.head
        if (!first) break
        if (fired++ === SLICE) {
          // A flood of alarms due at once (many leases renewed together): the rest on the next turn.
          this.#continuing = true
          const more = setImmediate(this.#continue)
          if (this.#keepAlive === 0) more.unref()
          return
        }
        this.#unlink(first)
        try {
          first.fire(first)
        } catch (err) {
          queueMicrotask(() => {
            throw err
          })
        }
      }
    } finally {
      this.#draining = false
    }
    // Empty lanes are dropped here, not as they empty: a lane that empties and fills again with
    // every request (one lease held at a time) would otherwise be made anew each time.
    let next = Infinity
    for (const lane of this.#lanes.values()) {
      if (!lane.head) {
        this.#lanes.delete(lane.key)
        if (this.#lastLane === lane) this.#lastLane = undefined
      } else if (lane.head.due < next) next = lane.head.due
    }
    if (next < Infinity) this.#arm(next)
  }
}

const timeline = new Timeline()

/** Arms `alarm` to fire at `due` (`performance.now()` time); `lane` groups alarms of equal delay. */
export const setAlarm = (alarm: Alarm, due: number, lane: number): void => timeline.set(alarm, due, lane)

/** Disarms `alarm`. */
export const cancelAlarm = (alarm: Alarm): void => timeline.cancel(alarm)

/** What `settleWithin` makes of each outcome; a handler that throws rejects the settled promise. */
export interface Settle<T, R> {
  value(value: T): R
  error(err: unknown): R
  /** No outcome within the limit (a later one is dropped). */
  silent(): R
  /** A value that came after `silent` (absent: dropped). */
  late?(value: T): void
}

/**
 * The one reply limit, an `Into` to hand to the work: settled by the first of value, error and
 * silence for `ms`, read by `settle`, on the shared timeline (no Node timer per call). Its
 * `promise` is the only one from the request to the caller's result: the hot path of every
 * acquire and release. A value after the silence goes to `settle.late`, anything else later is
 * dropped; `thrown` (the send threw) rejects with what it threw. The alarm holds the process open,
 * as a pending reply does. `lane`: alarms whose due times grow in the order they are armed.
 */
export class ReplyLimit<T, R> extends Alarm implements Into<T> {
  readonly promise: Promise<R>
  readonly #settle: Settle<T, R>
  #resolve!: (result: R) => void
  #reject!: (err: unknown) => void
  /** Set once settled; `silenced`: by the silence (a value then is late). */
  #settled = false
  #silenced = false

  /** The alarm is the limit itself (one object per request, no closure to fire it). */
  static readonly #fire = (alarm: Alarm): void => (alarm as ReplyLimit<unknown, unknown>).#silent()

  constructor(ms: number, lane: number, settle: Settle<T, R>) {
    super(ReplyLimit.#fire, true)
    this.#settle = settle
    this.promise = new Promise<R>((resolve, reject) => {
      this.#resolve = resolve
      this.#reject = reject
    })
    timeline.set(this, performance.now() + ms, lane)
  }

  // Fields, not methods: the work may hand them on alone (`.then(into.value, into.error)`).
  readonly value = (value: T): void => {
    if (this.#settled) {
      if (this.#silenced) this.#settle.late?.(value)
      return
    }
    this.#settled = true
    timeline.cancel(this)
    try {
      this.#resolve(this.#settle.value(value))
    } catch (err) {
      this.#reject(err)
    }
  }

  readonly error = (failure: unknown): void => {
    if (this.#settled) return
    this.#settled = true
    timeline.cancel(this)
    try {
      this.#resolve(this.#settle.error(failure))
    } catch (err) {
      this.#reject(err)
    }
  }

  /** The work threw as it was sent: the promise rejects with what it threw. */
  thrown(err: unknown): void {
    this.#settled = true
    timeline.cancel(this)
    this.#reject(err)
  }

  #silent(): void {
    this.#settled = true
    this.#silenced = true
    try {
      this.#resolve(this.#settle.silent())
    } catch (err) {
      this.#reject(err)
    }
  }
}

/** `start`'s outcome through a `ReplyLimit`: its promise (`start` throwing rejects it). */
export function settleWithin<T, R>(start: (into: Into<T>) => void, ms: number, lane: number, settle: Settle<T, R>): Promise<R> {
  const limit = new ReplyLimit(ms, lane, settle)
  try {
    start(limit)
  } catch (err) {
    limit.thrown(err)
  }
  return limit.promise
}

const rethrow = (err: unknown): never => {
  throw err
}

/** `work`'s outcome, or `NO_REPLY` if `ms` pass first (a later outcome is dropped): `settleWithin` for a promise. */
export function replyWithin<T>(work: Promise<T>, ms: number, lane = Math.round(ms)): Promise<T | typeof NO_REPLY> {
  return settleWithin<T, T | typeof NO_REPLY>((into) => void work.then(into.value, into.error), ms, lane, {
    value: (value) => value,
    error: rethrow,
    silent: () => NO_REPLY,
  })
}
