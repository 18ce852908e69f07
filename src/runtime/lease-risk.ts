import type { FencelockError } from '../errors/errors.js'
import { events } from '../util/telemetry.js'
import type { LeaseRisk } from './lease.js'

/**
 * A lease's warnings before a loss (`Lease.onAtRisk`): its listeners, and whether the extension in
 * flight was reported already (once per failed extension).
 */
export class LeaseRisks {
  /** Made when the first listener is added. */
  #listeners: Set<(risk: LeaseRisk) => void> | undefined
  /** The extension in flight (the last one sent) was reported at risk already. */
  #heard = false

  add(listener: (risk: LeaseRisk) => void): () => void {
    const listeners = (this.#listeners ??= new Set())
    const own = (risk: LeaseRisk) => listener(risk)
    listeners.add(own)
    return () => void listeners.delete(own)
  }

  /** A new extension was sent: its failure may be reported. */
  extending(): void {
    this.#heard = false
  }

  /** True when a report would reach someone: a listener, or a `fencelock:at-risk` subscriber (the error is built only then). */
  listened(): boolean {
    return Boolean(this.#listeners?.size) || events.atRisk.hasSubscribers
  }

  /** Whether this failure is the first of the extension in flight; the caller reports it to telemetry then. */
  first(): boolean {
    if (this.#heard) return false
    this.#heard = true
    return true
  }

  /** Calls every listener; a listener's bug must not stop the renewals: it surfaces as an uncaught exception, as an EventEmitter's would. */
  tell(remaining: number, error: FencelockError): void {
    if (!this.#listeners) return
    for (const listener of this.#listeners) {
      try {
        listener({ remaining, error })
      } catch (thrown) {
        queueMicrotask(() => {
          throw thrown
        })
      }
    }
  }
}
