import { FencelockError, InvalidArgumentError, LockTimeoutError, RedisError } from './errors.js'
import { isPermanentReplyError } from '../redis/adapter.js'

/**
 * The one place where a failure becomes the typed error the caller sees. A FencelockError raised
 * below (a quorum's votes, a replication shortfall, a refused wake-up) already says what happened
 * and passes unchanged; anything else (the client's errors) becomes a RedisError that carries it
 * as `cause` and says what fencelock was doing.
 */
export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err))

/**
 * Retrying cannot cure it: a reply error such as NOPERM or OOM, or a refusal a primitive typed as a
 * caller's mistake. (A quorum or replication shortfall is retried until the wait runs out.)
 */
export const isPermanent = (err: unknown): boolean => err instanceof InvalidArgumentError || isPermanentReplyError(err)

/** `err` from `what` ("release lock \"r\""), typed. */
export function redisFailure(what: string, err: unknown): FencelockError {
  if (err instanceof FencelockError) return err
  return new RedisError(`Could not ${what}: ${errorText(err)}`, { cause: err })
}

/**
 * No reply within `ms`; `text` follows "No reply from Redis within N ms". Where the client said why
 * (its last 'error': ECONNREFUSED while it reconnects with the call queued), the message says it and
 * `cause` holds it; otherwise `guess` says what silence can mean.
 */
export function noReplyError(ms: number, text: string, clientError: Error | undefined, guess = ''): RedisError {
  const lead = `No reply from Redis within ${Math.round(ms)} ms`
  if (clientError === undefined) return new RedisError(`${lead}${guess}${text}`)
  return new RedisError(`${lead} (the client last reported: ${errorText(clientError)})${text}`, { cause: clientError })
}

/** No reply within `ms` to `what` ("release lock \"r\""). */
export const noReply = (what: string, ms: number, clientError: Error | undefined, consequence = ''): RedisError =>
  noReplyError(ms, `: could not ${what}${consequence}`, clientError)

/** A failed acquisition attempt: says whether Redis refused or could not be reached. */
export function attemptError(resource: string, failure: { error: unknown; permanent: boolean }): FencelockError {
  if (failure.error instanceof FencelockError) return failure.error
  const what = failure.permanent ? 'Redis refused' : 'Could not acquire'
  return new RedisError(`${what} lock "${resource}": ${errorText(failure.error)}`, { cause: failure.error })
}

/**
 * A wait that ran out: a timeout when it was contention, the error that kept it from the lock
 * otherwise (Redis failing or silent, a quorum's votes), so that it does not read as contention.
 */
export function waitError(resource: string, waited: number, lastError: unknown): FencelockError {
  if (lastError === undefined) return new LockTimeoutError(resource, waited)
  if (lastError instanceof FencelockError && !(lastError instanceof RedisError)) return lastError
  return new RedisError(`Redis failed while waiting ${Math.round(waited)} ms for lock "${resource}": ${errorText(lastError)}`, { cause: lastError })
}

/** Redis refused the SUBSCRIBE that waiting needs (an ACL without it): waiting could only poll. */
export function subscribeRefused(resource: string, err: unknown): RedisError {
  return new RedisError(
    `Redis refused the SUBSCRIBE that waiting for lock "${resource}" needs (grant the Redis user SUBSCRIBE and the lock channels, &<prefix>*): ${errorText(err)}`,
    { cause: err },
  )
}

/** A release that happened, but whose wake-up Redis refused (the user lacks PUBLISH): say both. */
export function wakeRefused(resource: string, refused: string): RedisError {
  return new RedisError(
    `Released lock "${resource}", but Redis refused the PUBLISH that wakes the next waiter (grant the Redis user PUBLISH on the lock channels, &<prefix>*); waiters find the lock free only at their next re-check: ${refused}`,
    { cause: new Error(refused) },
  )
}
