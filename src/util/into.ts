/**
 * The one internal convention for an outcome that comes later: the caller hands an `Into` down,
 * and the work calls `value` or `error` on it once. No promise is made between a Redis reply and
 * the caller that reads it (the hot path of every acquire and release makes none of its own);
 * where a caller wants a promise, `promised` makes the one promise at that edge.
 */
export interface Into<T> {
  value(value: T): void
  error(err: unknown): void
}

/** The promise of work that hands its outcome to an `Into`; a synchronous throw of `send` rejects it. */
export function promised<T>(send: (into: Into<T>) => void): Promise<T> {
  return new Promise<T>((value, error) => {
    try {
      send({ value, error })
    } catch (err) {
      error(err)
    }
  })
}

/** An outcome nobody waits for (a give-back, a late grant released): dropped. */
export const DROPPED: Into<unknown> = { value() {}, error() {} }
