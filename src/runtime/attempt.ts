import { randomUUID } from 'node:crypto'
import type { Attempt } from '../topology/backend.js'
import { isPermanent, lateReply, noReplyError } from '../errors/failures.js'
import { drift, type LeaseContext } from './lease-context.js'
import { LeaseState } from './lease-state.js'
import { settleWithin } from '../util/alarms.js'
import type { TryResult } from './waiter.js'

/**
 * One attempt's terms. `id`: the waiter that joins the fair queue if it fails (none for a caller
 * that does not wait); `retryToken`: the token of an attempt whose outcome is unknown (see TryResult).
 * A waiter is one (it never auto-extends: its lease is set to after it is granted).
 */
export interface AttemptRequest {
  readonly resource: string
  readonly ttl: number
  readonly id: string | undefined
  readonly autoExtend?: boolean
  readonly deadline: number
  readonly retryToken: string | undefined
}

/**
 * One attempt. Validity is counted from before the request was sent: a reply that arrives after
 * the ttl minus drift is worthless, so the attempt gives up then, and a lock that such a late
 * reply grants is released at once.
 */
export function attemptOnce(context: LeaseContext, request: AttemptRequest): Promise<TryResult> {
  const { resource, ttl } = request
  const start = performance.now()
  const token = request.retryToken ?? randomUUID()
  const budget = ttl - drift(context, ttl)
  // Never wait for a reply past the caller's wait deadline either (Redis down, offline queue).
  const limit = Math.max(0, Math.min(budget, request.deadline - start))
  let attempt: Promise<Attempt>
  try {
    // The topology contract (and the scripts' ARGV) spell "no waiter" as ''.
    attempt = context.backend.attempt(resource, token, ttl, request.id ?? '')
  } catch (err) {
    return Promise.reject(err)
  }
  // One promise from the reply (or its silence) to the result: the hot path of every attempt.
  return settleWithin<Attempt, TryResult>(attempt, limit, Math.round(limit), {
    silent: () => {
      // Still in flight: a lock that this late attempt is granted is released at once.
      attempt.then(
        (late) => {
          if (late.acquired) void context.backend.release(resource, late.token).catch(() => {})
        },
        () => {},
      )
      const error = noReplyError(
        { kind: 'no-reply', ms: limit, clientError: context.backend.clientError?.() },
        '',
        ' (Redis down, paused or unreachable, or the client is reconnecting)',
      )
      return { error, permanent: false, silent: limit }
    },
    value: (outcome) => {
      try {
        if (!outcome.acquired) return outcome.blocked ? { retry: outcome.retry, blocked: outcome.blocked } : { retry: outcome.retry }
        if (performance.now() - start >= budget) {
          void context.backend.release(resource, outcome.token).catch(() => {})
          return { error: lateReply(resource), permanent: false }
        }
        const lease = new LeaseState(context, {
          resource,
          token: outcome.token,
          fence: outcome.fence,
          ttl,
          start,
          autoExtend: request.autoExtend ?? false,
        })
        context.leases.add(lease)
        return { lease }
      } catch (err) {
        return { error: err, permanent: isPermanent(err), token }
      }
    },
    // The attempt may have run before the connection failed: retry with the same token. (Not
    // after a timeout: that attempt is still in flight and its late grant is released above.)
    error: (err: unknown): TryResult => ({ error: err, permanent: isPermanent(err), token }),
  })
}
