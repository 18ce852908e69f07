/**
 * What a Redis call came to when it did not answer normally: the one union both sides of the
 * adapter boundary speak. The adapter (src/redis/) is the only code that knows a client's errors
 * and classifies each one as it leaves; NOSCRIPT never leaves (the adapter resends as EVAL). The
 * runtime's reply limits add `no-reply`. Plain data: the client's own error stays what callers see
 * as `cause` (and what a quorum vote holds), so the classification travels beside it.
 */
export type RedisFailure =
  /** A reply error that retrying will not cure: NOPERM, OOM, WRONGTYPE, a script error. */
  | { readonly kind: 'refused'; readonly error: unknown }
  /** Connection reset or refused, LOADING, BUSY, READONLY, TRYAGAIN, CLUSTERDOWN ...: may pass. */
  | { readonly kind: 'transient'; readonly error: unknown }
  /** The user's client was closed for good: no call can succeed. */
  | { readonly kind: 'closed'; readonly error: unknown }
  /** No reply within `ms`; `clientError` is the client's last 'error' (ECONNREFUSED while it reconnects). */
  | { readonly kind: 'no-reply'; readonly ms: number; readonly clientError: Error | undefined }

/** What the adapter found a client's error to be. */
export type FailureKind = 'refused' | 'transient' | 'closed'

/** Errors the adapter classified, keyed by the client's error itself (nothing is added to it). */
const classified = new WeakMap<object, FailureKind>()

/** The adapter's verdict on `error`, as it leaves the adapter; returns `error` for rethrowing. */
export function classify<E>(error: E, kind: FailureKind): E {
  if (typeof error === 'object' && error !== null) classified.set(error, kind)
  return error
}

/**
 * `error` as a `RedisFailure`. An error the adapter did not see (a reply of an unexpected shape,
 * failing its decoder) counts as transient: the next attempt may well succeed.
 */
export function failureOf(error: unknown): RedisFailure {
  const kind = typeof error === 'object' && error !== null ? classified.get(error) : undefined
  return { kind: kind ?? 'transient', error }
}

/** Cheaper than `failureOf(error).kind === 'refused'` where only that question is asked (no object). */
export const isRefused = (error: unknown): boolean => typeof error === 'object' && error !== null && classified.get(error) === 'refused'

/** The same for `closed`. */
export const isClosedFailure = (error: unknown): boolean => typeof error === 'object' && error !== null && classified.get(error) === 'closed'
