/** A node-style callback, as node-redlock v4 takes one beside its promises. */
export type Callback<T> = (err: Error | null, value?: T) => void

/**
 * `promise`, and when `callback` is given, its outcome passed to it too (bluebird's `nodeify`):
 * `promise` then has a handler, so a failure told to the callback is not also an unhandled
 * rejection. An exception the callback throws is thrown outside the promise, as bluebird does.
 */
export function nodeify<T>(promise: Promise<T>, callback: Callback<T> | undefined): Promise<T> {
  if (typeof callback !== 'function') return promise
  promise.then(
    (value) => setImmediate(() => callback(null, value)),
    (error: Error) => setImmediate(() => callback(error)),
  )
  return promise
}
