import { createRequire } from 'node:module'
import path from 'node:path'

/** A node-style callback, as node-redlock v4 takes one beside its promises. */
export type Callback<T> = (err: Error | null, value?: T) => void

/** What node-redlock v4's promises were: bluebird's, whose methods (`done`, `nodeify`, `delay`, `disposer`) its users call. */
export interface BluebirdLike {
  resolve<T>(value: T | PromiseLike<T>): Promise<T>
}

let loaded: BluebirdLike | null | undefined

/** The application's bluebird, if it has one (node-redlock v4 depended on it; fencelock does not). */
export function applicationBluebird(): BluebirdLike | null {
  if (loaded === undefined) {
    try {
      loaded = createRequire(path.join(process.cwd(), 'index.js'))('bluebird') as BluebirdLike
    } catch {
      loaded = null
    }
  }
  return loaded
}

/**
 * `promise` as node-redlock v4 returned it: a bluebird promise where the application has bluebird
 * (a native one otherwise), and when `callback` is given, its outcome passed to it too (bluebird's
 * `nodeify`): the promise then has a handler, so a failure told to the callback is not also an
 * unhandled rejection. An exception the callback throws is thrown outside the promise, as bluebird does.
 */
export function nodeify<T>(promise: Promise<T>, callback: Callback<T> | undefined): Promise<T> {
  const result = applicationBluebird()?.resolve(promise) ?? promise
  if (typeof callback !== 'function') return result
  result.then(
    (value) => setImmediate(() => callback(null, value)),
    (error: Error) => setImmediate(() => callback(error)),
  )
  return result
}
