import { describeValue } from './describe-value.js'
import { ClosedError, FencelockError, InvalidArgumentError, LockTimeoutError, RedisError } from './errors.js'
import { failureOf, isRefused, type RedisFailure } from './redis-failure.js'

/**
 * The one place where a failure becomes the typed error the caller sees: every `RedisError` is
 * made here. A FencelockError raised below (a quorum's votes, a replication shortfall, a refused
 * wake-up) already says what happened and passes unchanged; a client's error (classified by the
 * adapter, see redis-failure.ts) becomes a RedisError that carries it as `cause` and says what
 * fencelock was doing.
 */
export const errorText = (err: unknown): string => (err instanceof Error ? err.message : typeof err === 'string' ? err : describeValue(err))

/**
 * Retrying cannot cure it: a reply error such as NOPERM or OOM, or a refusal a primitive typed as a
 * caller's mistake. (A quorum or replication shortfall is retried until the wait runs out.)
 */
export const isPermanent = (err: unknown): boolean => err instanceof InvalidArgumentError || isRefused(err)

/** `err` from `what` ("release lock \"r\""), typed. */
export function redisFailure(what: string, err: unknown): FencelockError {
  if (err instanceof FencelockError) return err
  return new RedisError(`Could not ${what}: ${errorText(err)}`, { cause: err })
}

/** An extension that failed: wrapped even when typed below (a ReplicationError is its `cause`). */
export const extendFailed = (resource: string, err: unknown): RedisError =>
  new RedisError(`Could not extend lock "${resource}": ${errorText(err)}`, { cause: err })

/**
 * No reply within `failure.ms`; `text` follows "No reply from Redis within N ms". Where the client
 * said why (its last 'error': ECONNREFUSED while it reconnects with the call queued), the message
 * says it and `cause` holds it; otherwise `guess` says what silence can mean.
 */
export function noReplyError(failure: Extract<RedisFailure, { kind: 'no-reply' }>, text: string, guess = ''): RedisError {
  const lead = `No reply from Redis within ${Math.round(failure.ms)} ms`
  const { clientError } = failure
  if (clientError === undefined) return new RedisError(`${lead}${guess}${text}`)
  return new RedisError(`${lead} (the client last reported: ${errorText(clientError)})${text}`, { cause: clientError })
}

/** `ms` without a reply from `client`'s Redis, with what the client last reported (its last 'error'). */
export const silenceOf = (ms: number, client: { clientError?(): Error | undefined }): Extract<RedisFailure, { kind: 'no-reply' }> => ({
  kind: 'no-reply',
  ms,
  clientError: client.clientError?.(),
})

/** No reply within `ms` to `what` ("release lock \"r\""). */
export const noReply = (what: string, ms: number, clientError: Error | undefined, consequence = ''): RedisError =>
  noReplyError({ kind: 'no-reply', ms, clientError }, `: could not ${what}${consequence}`)

/** A grant whose reply came after its validity: worthless (and released at once). */
export const lateReply = (resource: string): RedisError => new RedisError(`The reply for lock "${resource}" arrived after its validity`)

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

/** `close({ release: true })` could not release some of the leases it held. */
export function closeReleasesFailed(failed: readonly unknown[], held: number): RedisError {
  return new RedisError(`close({ release: true }) could not release ${failed.length} of ${held} leases (they expire at their ttl): ${errorText(failed[0])}`, {
    cause: new AggregateError(failed, 'release failures'),
  })
}

/** Without these the guards cannot run at all: say so, not only "no permissions". */
const permissionHint = (message: string): string =>
  /^NOPERM/.test(message) && /'eval(sha)?'/i.test(message) ? ' (the Redis user needs the EVALSHA and EVAL commands: ACL SETUSER <user> +evalsha +eval)' : ''

/** A guard script (fencedSet, claimFence) that failed doing `what`: refused, closed, or not reached. */
export function guardFailed(what: string, err: unknown): FencelockError {
  if (err instanceof FencelockError) return err
  const failure = failureOf(err)
  // Closed while the call was on its way (ioredis: "Connection is closed."): say that, typed.
  if (failure.kind === 'closed') return closedClient()
  const message = errorText(err)
  const verb = failure.kind === 'refused' ? 'Redis refused to' : 'Could not'
  return new RedisError(`${verb} ${what}: ${message}${permissionHint(message)}`, { cause: err })
}

/** The user's client was closed (by the user): nothing fencelock sends can succeed. */
export const closedClient = (name = 'redis'): ClosedError =>
  new ClosedError('CLIENT_CLOSED', `The \`${name}\` client is closed; connect it (node-redis: await client.connect()) before use`)
