/** What `withinLimit` resolves to when the limit passed first. */
export const NO_REPLY: unique symbol = Symbol('no reply')

/**
 * `work`'s outcome, or `NO_REPLY` if `ms` pass first (a later outcome is dropped). The timer is
 * cleared as soon as `work` settles. One promise and no race helper: this is on the hot path of
 * every acquire and release.
 */
export function withinLimit<T>(work: Promise<T>, ms: number): Promise<T | typeof NO_REPLY> {
  return new Promise<T | typeof NO_REPLY>((resolve, reject) => {
    const timer = setTimeout(resolve, ms, NO_REPLY)
    work.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (err: unknown) => {
        clearTimeout(timer)
        reject(err)
      },
    )
  })
}

/** What `unlessAborted` resolves to when the signal aborted first. */
export const ABORTED: unique symbol = Symbol('aborted')

/**
 * `work`'s outcome, or `ABORTED` as soon as `signal` aborts (also if it already has). The caller
 * still owns `work`: whatever it later yields (a granted lock) must be given back.
 */
export function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  if (signal.aborted) return Promise.resolve(ABORTED)
  return new Promise<T | typeof ABORTED>((resolve, reject) => {
    const onAbort = () => resolve(ABORTED)
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(err)
      },
    )
  })
}
