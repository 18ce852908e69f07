import type { Backend } from '../topology/backend.js'

/**
 * When an auto-extended lease renews next, and on which lane of the shared timeline. After a third
 * of the ttl, like Redisson's watchdog, rounded up to a grid of a tenth of the ttl (at most a
 * second): leases renewed together stay together and go out in one script call. After a failure,
 * sooner (a tenth of the ttl, at most a second), on a lane of its own: armed among regular
 * renewals, which come due later, each retry would be sorted in past all of them.
 */
export function renewalTime(now: number, ttl: number, failed: boolean): { due: number; lane: number } {
  if (failed) return { due: now + Math.max(1, Math.min(ttl / 10, 1_000)), lane: -ttl - 0.5 }
  const grid = Math.min(1_000, Math.max(1, Math.floor(ttl / 10)))
  return { due: Math.ceil((now + ttl / 3) / grid) * grid, lane: -ttl }
}

/** Leases per script call: enough to make 50,000 renewals a couple of hundred calls, few enough that one call keeps Redis busy well under a millisecond or two. */
export const RENEWAL_CHUNK = 250

interface Pending {
  readonly resource: string
  readonly token: string
  readonly ttl: number
  resolve(extended: boolean): void
  reject(err: unknown): void
}

type Batching = Backend<unknown> & {
  readonly extendMany: NonNullable<Backend<unknown>['extendMany']>
  readonly batchKey: NonNullable<Backend<unknown>['batchKey']>
}

/**
 * Automatic renewals of one backend, batched as Redisson's watchdog batches them: the renewals
 * that fall due in one turn of the event loop (leases renew on a shared grid, see lease-state.ts)
 * go out as one script call per Redis node or cluster slot and per `RENEWAL_CHUNK` leases, sent
 * together (pipelined) once that turn's renewals are all in. Each lease still gets its own answer
 * through the promise `extend` returned: extended, not extended (that lease alone is lost), or
 * the error of the call it was in, which it handles exactly as the error of an extend of its own.
 */
export class Renewals {
  readonly #backend: Batching
  #queue: Pending[] = []
  #scheduled = false

  constructor(backend: Batching) {
    this.#backend = backend
  }

  /** The backend's batched renewals, or undefined if its primitive or topology extends one lease per call. */
  static for(backend: Backend<unknown>): Renewals | undefined {
    return backend.extendMany && backend.batchKey ? new Renewals(backend as Batching) : undefined
  }

  /** As `backend.extend`, sent with the other renewals of this turn. */
  extend(resource: string, token: string, ttl: number): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.#queue.push({ resource, token, ttl, resolve, reject })
      if (!this.#scheduled) {
        this.#scheduled = true
        queueMicrotask(this.#flush)
      }
    })
  }

  readonly #flush = (): void => {
    this.#scheduled = false
    const queue = this.#queue
    this.#queue = []
    if (queue.length === 1) {
      // Alone in its turn: the plain extend script, as without batching.
      const [only] = queue as [Pending]
      this.#backend.extend(only.resource, only.token, only.ttl).then(only.resolve, only.reject)
      return
    }
    const groups = new Map<number, Pending[]>()
    for (const pending of queue) {
      const key = this.#backend.batchKey(pending.resource)
      const group = groups.get(key)
      if (group) group.push(pending)
      else groups.set(key, [pending])
    }
    for (const group of groups.values()) {
      for (let i = 0; i < group.length; i += RENEWAL_CHUNK) this.#send(group.slice(i, i + RENEWAL_CHUNK))
    }
  }

  #send(chunk: Pending[]): void {
    let sent: Promise<readonly (boolean | Error)[]>
    try {
      sent = this.#backend.extendMany(chunk)
    } catch (err) {
      sent = Promise.reject(err)
    }
    sent.then(
      (answers) => {
        for (let i = 0; i < chunk.length; i++) {
          const answer = answers[i]
          if (answer instanceof Error) chunk[i]!.reject(answer)
          else chunk[i]!.resolve(answer === true)
        }
      },
      (err: unknown) => {
        for (const pending of chunk) pending.reject(err)
      },
    )
  }
}
