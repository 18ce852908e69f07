import { Alarm, cancelAlarm, setAlarm } from '../util/alarms.js'

/** A lease's two alarms, on the shared timeline (alarms.ts): no Node timer per lease. */
export class LeaseAlarms {
  readonly #onDeadline: () => void
  readonly #onRenewal: () => void
  #expiry: Alarm | undefined
  #renewal: Alarm | undefined

  constructor(onDeadline: () => void, onRenewal: () => void) {
    this.#onDeadline = onDeadline
    this.#onRenewal = onRenewal
  }

  clear(): void {
    if (this.#expiry) cancelAlarm(this.#expiry)
    if (this.#renewal) cancelAlarm(this.#renewal)
  }

  /** The deadline's alarm, in lane `ttl`. Alarms never keep the process alive: an abandoned lease simply expires in Redis. */
  expireAt(deadline: number, ttl: number): void {
    setAlarm((this.#expiry ??= new Alarm(this.#onDeadline)), deadline, ttl)
  }

  /** The next automatic extension, or none (`undefined`). */
  renewAt(renewal: { due: number; lane: number } | undefined): void {
    if (renewal === undefined) {
      if (this.#renewal) cancelAlarm(this.#renewal)
      return
    }
    setAlarm((this.#renewal ??= new Alarm(this.#onRenewal)), renewal.due, renewal.lane)
  }
}
