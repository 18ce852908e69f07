// Who holds what right now, as the workers' events tell it: what the nemesis aims at (a holder
// between its read and its write is the one a pause hurts).
import type { HistoryEvent } from './history.js'

export interface Holder {
  slot: number
  fence: number
  deadline: number
  /**
   * In the middle of its work, the moment a pause hurts: between its read and its write (mutex), or
   * with units of work still to do after this one (semaphore).
   */
  read: boolean
}

export class Holders {
  readonly #byKey = new Map<string, Holder>()

  /** `semaphore`: permits are told apart by their fence (the nemesis then finds no holder under the resource's name and picks one that is working). */
  constructor(
    private readonly semaphore: boolean,
    private readonly now: () => number,
    private readonly ttl: number,
  ) {}

  /** A mutex has one holder per resource; a semaphore's permits are told apart by their fence. */
  #key(resource: string, fence: number | undefined): string {
    return this.semaphore ? `${resource}#${fence}` : resource
  }

  get(resource: string): Holder | undefined {
    return this.#byKey.get(resource)
  }

  values(): Holder[] {
    return [...this.#byKey.values()]
  }

  observe(event: HistoryEvent): void {
    if (event.kind === 'lost') {
      if (this.#byKey.get(this.#key(event.resource, event.fence))?.fence === event.fence) this.#byKey.delete(this.#key(event.resource, event.fence))
      return
    }
    if (event.kind !== 'op') return
    const slot = Number(event.worker.slice(1))
    const k = this.#key(event.resource, event.fence)
    if (event.f === 'acquire' && event.type === 'ok' && event.fence !== undefined) {
      const deadline = (event.value as { deadline?: number } | undefined)?.deadline ?? this.now() + this.ttl
      this.#byKey.set(k, { slot, fence: event.fence, deadline, read: false })
    }
    const holder = this.#byKey.get(k)
    if (holder && event.f === 'extend' && event.type === 'ok') holder.deadline = (event.value as { deadline?: number } | undefined)?.deadline ?? holder.deadline
    // A leader reads once per round: it is between a read and its write only from the read's reply on.
    if (holder && event.f === 'read' && event.type === 'invoke' && holder.fence === event.fence) holder.read = false
    if (holder && event.f === 'read' && event.type === 'ok' && holder.fence === event.fence) holder.read = true
    if (holder && event.f === 'work' && event.type === 'invoke' && holder.fence === event.fence) {
      const { unit, of } = (event.value ?? {}) as { unit?: number; of?: number }
      holder.read = unit !== undefined && of !== undefined && unit < of - 1
    }
    if (event.f === 'release' && event.type === 'invoke' && this.#byKey.get(k)?.fence === event.fence) this.#byKey.delete(k)
  }
}
