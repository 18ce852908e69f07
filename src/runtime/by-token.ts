import type { Backend } from '../topology/backend.js'
import { LockLostError, RedisError } from '../errors/errors.js'
import { errorText, noReply, redisFailure } from '../errors/failures.js'
import { NO_REPLY, replyWithin } from '../util/alarms.js'
import { promised } from '../util/into.js'
import { drift, type LeaseContext } from './lease-context.js'
import type { LeaseState } from './lease-state.js'
import type { Runtime } from './runtime.js'

/**
 * Release, extend and inspect of a lock known by its name and token (perhaps held by another
 * process), for one primitive on one topology: each bounded in time, as a lease's own calls are.
 * The caller (`Operations`) has validated its arguments and checked the instance is open.
 */
export interface ByToken<Info> {
  readonly runtime: Runtime
  readonly backend: Backend<Info>
  readonly leases: LeaseContext
}

export function releaseByToken(on: ByToken<unknown>, resource: string, token: string): Promise<boolean> {
  // A lease of this instance: release it as such, so its timers stop and its state is right.
  const local = leaseOf(on, resource, token)
  if (local) return local.release()
  // Bounded like lease.release(): a Redis that does not answer must not hold the caller forever.
  return bounded(
    on,
    `release lock "${resource}"`,
    Math.min(on.runtime.defaults.ttl, 10_000),
    promised<boolean>((into) => on.backend.release(resource, token, into)),
  )
}

/**
 * Ends the lock held under `token` (a release by token) and tells its holder at once: a notice on
 * the instance's revocation channel, which the holder's instance hears while it holds leases, and
 * whose lease then aborts its signal with reason 'revoked'. True if this call ended it; false if
 * that token no longer held it. A lease of this instance is lost and released here directly.
 */
export async function revokeByToken(on: ByToken<unknown>, resource: string, token: string, channel: string): Promise<boolean> {
  const local = leaseOf(on, resource, token)
  if (local) {
    // Lost now, still in Redis: its release ends it there (as after locks.close()).
    local.abandon('revoked')
    return local.release()
  }
  const limit = Math.min(on.runtime.defaults.ttl, 10_000)
  const released = await bounded(
    on,
    `revoke lock "${resource}"`,
    limit,
    promised<boolean>((into) => on.backend.release(resource, token, into)),
  )
  if (!released) return false
  try {
    await bounded(on, `tell the holder of lock "${resource}"`, limit, on.backend.announce(channel, token))
  } catch (err) {
    // The lock is ended; only the holder's news is late: it learns at its next extension.
    throw new RedisError(
      `Revoked lock "${resource}" (token ${token}), but its holder could not be told; it learns at its next extension (refused): ${errorText(err)}`,
      { cause: err },
    )
  }
  return true
}

/** Revokes each of `tokens` in turn (`one` revokes one); resolves with those this call ended. */
export async function revokeEach(tokens: readonly string[], one: (token: string) => Promise<boolean>): Promise<readonly string[]> {
  const revoked: string[] = []
  for (const token of tokens) if (await one(token)) revoked.push(token)
  return revoked
}

export async function extendByToken(on: ByToken<unknown>, resource: string, token: string, ms: number): Promise<boolean> {
  const local = leaseOf(on, resource, token)
  if (local) {
    try {
      await local.extend(ms)
      return true
    } catch (err) {
      if (err instanceof LockLostError) return false
      throw err
    }
  }
  // A reply later than the new ttl minus drift extends nothing the caller can count on. A lease
  // the backend already knows lost (a quorum majority silent) is not extended: false, as refused.
  const extending = on.backend.extend(resource, token, ms).catch((err: unknown) => {
    if (err instanceof LockLostError) return false
    throw err
  })
  return bounded(on, `extend lock "${resource}"`, ms - drift(on.leases, ms), extending)
}

export function inspectBounded<Info>(on: ByToken<Info>, resource: string): Promise<Info> {
  return bounded(on, `inspect lock "${resource}"`, Math.min(on.runtime.defaults.ttl, 10_000), on.backend.inspect(resource))
}

function leaseOf(on: ByToken<unknown>, resource: string, token: string): LeaseState | undefined {
  for (const lease of on.runtime.leases) if (lease.token === token && lease.resource === resource && lease.context === on.leases) return lease
  return undefined
}

/** `work`, or a typed error if it fails or has no answer within `limit` ms. */
async function bounded<T>(on: ByToken<unknown>, what: string, limit: number, work: Promise<T>): Promise<T> {
  let outcome: T | typeof NO_REPLY
  try {
    outcome = await replyWithin(work, Math.max(1, limit))
  } catch (err) {
    throw redisFailure(what, err)
  }
  if (outcome === NO_REPLY) throw noReply(what, limit, on.backend.clientError?.())
  return outcome
}
