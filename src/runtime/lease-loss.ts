import { FencelockError, type LockLostError, type LockLostReason } from '../errors/errors.js'

/**
 * A lease's loss: why it was lost, the signal that aborts with it, and the extensions in flight
 * (and when each was sent), which stop waiting for their reply when the lease is lost.
 */
export class LeaseLoss {
  /** Made when someone first reads `signal` (most leases are released without anyone reading it). */
  #controller: AbortController | undefined
  /** Why the lease was lost; the signal aborts with it (at once if it is read later). */
  #reason: LockLostError | undefined
  /** Extensions in flight (and when each was sent), which stop waiting for their reply when the lease is lost. */
  #watchers: Map<() => void, number> | undefined

  /** Aborts with `LockLostError` when the lease is lost. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController()
      if (this.#reason) this.#controller.abort(this.#reason)
    }
    return this.#controller.signal
  }

  get reason(): LockLostError | undefined {
    return this.#reason
  }

  /** An extension sent at `sent` waits for its reply: `onLost` ends the wait when the lease is lost. */
  watch(onLost: () => void, sent: number): void {
    ;(this.#watchers ??= new Map()).set(onLost, sent)
  }

  unwatch(onLost: () => void): void {
    this.#watchers!.delete(onLost)
  }

  /** When the oldest extension still waiting for its reply was sent, of those sent before `late`. */
  waitingSince(late: number): number | undefined {
    if (!this.#watchers?.size) return undefined
    let since: number | undefined
    for (const sent of this.#watchers.values()) if (sent < late && (since === undefined || sent < since)) since = sent
    return since
  }

  /**
   * Why a lease whose deadline passed is lost: 'unreachable' if Redis did not answer (an extension
   * sent before `late` is still waiting for its reply, or the last one failed: a lost connection,
   * WAIT short of replicas), else 'expired' (none was asked for in time: no autoExtend, a blocked
   * event loop). The cause is the newest news (the silence, `silent` of how long, with what the
   * client last reported), unless the last failure was Redis' own word on this lease (a
   * ReplicationError), which says more than the silence it leads to.
   */
  atDeadline(late: number, lastError: unknown, silent: (ms: number) => FencelockError): { reason: LockLostReason; cause: unknown } {
    const since = this.waitingSince(late)
    if (since !== undefined && !(lastError instanceof FencelockError)) return { reason: 'unreachable', cause: silent(performance.now() - since) }
    return { reason: since === undefined && lastError === undefined ? 'expired' : 'unreachable', cause: lastError }
  }

  /**
   * `extending`'s answer, or 'lost' as soon as the lease is lost: a reply that has not come by the
   * deadline comes too late (the signal aborts then), so the extension sent at `sent` stops
   * waiting instead of hanging while Redis is unreachable.
   */
  async answerOrLost(extending: Promise<boolean>, sent: number): Promise<boolean | 'lost'> {
    let onLost: (() => void) | undefined
    try {
      return await new Promise<boolean | 'lost'>((resolve, reject) => {
        onLost = () => resolve('lost')
        this.watch(onLost, sent)
        extending.then(resolve, reject)
      })
    } finally {
      this.unwatch(onLost!)
    }
  }

  abort(reason: LockLostError): void {
    this.#reason = reason
    this.#controller?.abort(reason)
    if (this.#watchers) for (const watcher of this.#watchers.keys()) watcher()
  }
}
