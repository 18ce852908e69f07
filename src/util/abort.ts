/** What `unlessAborted` resolves to when the signal aborted first. */
export const ABORTED: unique symbol = Symbol('aborted')

/**
 * `work`'s outcome, or `ABORTED` as soon as `signal` aborts (also if it already has). The caller
 * still owns `work`: whatever it later yields (a granted lock) must be given back.
 */
export function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  if (signal.aborted) return Promise.resolve(ABORTED)
  return new Promise<T | typeof ABORTED>((resolve, reject) => {
    const off = whenAborted(signal, () => resolve(ABORTED))
    work.then(
      (value) => {
        off()
        resolve(value)
      },
      (err: unknown) => {
        off()
        reject(err)
      },
    )
  })
}

/**
 * Calls `onAbort` once when `signal` aborts, at once if it already has (an 'abort' event never
 * fires twice); returns what stops listening. The one way fencelock listens to a caller's signal.
 */
export function whenAborted(signal: AbortSignal, onAbort: () => void): () => void {
  if (signal.aborted) {
    onAbort()
    return noop
  }
  signal.addEventListener('abort', onAbort, { once: true })
  return () => signal.removeEventListener('abort', onAbort)
}

const noop = (): void => {}
