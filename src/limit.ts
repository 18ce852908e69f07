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
