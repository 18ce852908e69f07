import type { Backend } from '../topology/backend.js'
import { LockLostError } from '../errors/errors.js'
import { noReply, redisFailure } from '../errors/failures.js'
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
