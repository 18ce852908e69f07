import { randomUUID } from 'node:crypto'
import type { Attempt } from '../topology/backend.js'
import { isPermanent, lateReply, noReplyError, silenceOf } from '../errors/failures.js'
import { drift, type LeaseContext } from './lease-context.js'
import { LeaseState } from './lease-state.js'
import { ReplyLimit, type Settle } from '../util/alarms.js'
import { DROPPED } from '../util/into.js'
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
  return attemptThen(context, request, same)
}

const same = (result: TryResult): TryResult => result

/**
 * `attemptOnce` with its result read by `then` in the handler that settles it: the promise
 * returned holds what `then` returns (or adopts it, a promise), or rejects with what it throws.
 * The acquire fast path hands its caller this one promise, not one more of its own.
 */
export function attemptThen<R>(context: LeaseContext, request: AttemptRequest, then: (result: TryResult) => R | PromiseLike<R>): Promise<R> {
  const start = performance.now()
  const token = request.retryToken ?? randomUUID()
  const budget = request.ttl - drift(context, request.ttl)
  // Never wait for a reply past the caller's wait deadline either (Redis down, offline queue).
  const limit = Math.max(0, Math.min(budget, request.deadline - start))
  // One promise from the reply (or its silence) to the result: the hot path of every attempt.
  const reply = new ReplyLimit<Attempt, R | PromiseLike<R>>(limit, Math.round(limit), new AttemptReply(context, request, token, start, limit, then))
  try {
    // The topology contract (and the scripts' ARGV) spell "no waiter" as ''.
    context.backend.attempt(request.resource, token, request.ttl, request.id ?? '', reply)
  } catch (err) {
    reply.thrown(err)
  }
  return reply.promise as Promise<R>
}

/**
 * What one attempt makes of its reply, its failure or its silence, read by `then`: one object per
 * attempt with its handlers as methods (not a closure per handler and outcome).
 */
class AttemptReply<R> implements Settle<Attempt, R | PromiseLike<R>> {
  readonly #context: LeaseContext
  readonly #request: AttemptRequest
  readonly #token: string
  readonly #start: number
  readonly #limit: number
  readonly #then: (result: TryResult) => R | PromiseLike<R>

  constructor(context: LeaseContext, request: AttemptRequest, token: string, start: number, limit: number, then: (result: TryResult) => R | PromiseLike<R>) {
    this.#context = context
    this.#request = request
    this.#token = token
    this.#start = start
    this.#limit = limit
    this.#then = then
  }

  value(outcome: Attempt): R | PromiseLike<R> {
    return this.#then(this.#granted(outcome))
  }

  // The attempt may have run before the connection failed: retry with the same token. (Not
  // after a timeout: that attempt is still in flight and its late grant is released below.)
  error(err: unknown): R | PromiseLike<R> {
    return this.#then({ error: err, permanent: isPermanent(err), token: this.#token })
  }

  silent(): R | PromiseLike<R> {
    const limit = this.#limit
    const error = noReplyError(silenceOf(limit, this.#context.backend), '', ' (Redis down, paused or unreachable, or the client is reconnecting)')
    return this.#then({ error, permanent: false, silent: limit })
  }

  /** The reply came after the attempt gave up: a lock it was granted is released at once. */
  late(late: Attempt): void {
    if (late.acquired) this.#context.backend.release(this.#request.resource, late.token, DROPPED)
  }

  /** The reply read: refused, too late to count on, or a lease (registered with the context). */
  #granted(outcome: Attempt): TryResult {
    const context = this.#context
    const { resource, ttl, autoExtend } = this.#request
    try {
      if (!outcome.acquired) return outcome.blocked ? { retry: outcome.retry, blocked: outcome.blocked } : { retry: outcome.retry }
      if (performance.now() - this.#start >= ttl - drift(context, ttl)) {
        context.backend.release(resource, outcome.token, DROPPED)
        return { error: lateReply(resource), permanent: false }
      }
      const lease = new LeaseState(context, {
        resource,
        token: outcome.token,
        fence: outcome.fence,
        ttl,
        start: this.#start,
        autoExtend: autoExtend ?? false,
      })
      context.leases.add(lease)
      return { lease }
    } catch (err) {
      return { error: err, permanent: isPermanent(err), token: this.#token }
    }
  }
}
