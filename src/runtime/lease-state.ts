import { LockLostError, RedisError, type FencelockError, type LockLostReason } from '../errors/errors.js'
import { extendFailed, noReplyError, silenceOf } from '../errors/failures.js'
import { checkLeaseTtl } from '../util/validate.js'
import type { Lease, LeaseRisk } from './lease.js'
import { LeaseAlarms } from './lease-alarms.js'
import { drift, type Extender, type LeaseContext, type LeaseInit } from './lease-context.js'
import { reportAtRisk, reportExtend, reportLost, reportRelease } from './events.js'
import { LeaseRisks } from './lease-risk.js'
import { LeaseLoss } from './lease-loss.js'
import { releaseWithin } from './lease-release.js'
import { renewalTime } from './renewals.js'

/** The one implementation of `Lease`: deadline, signal, renewal. Internal (its constructor and controls are not exported). */
export class LeaseState implements Lease {
  // What the members of `Lease` do is described once, on the interface (lease.ts).
  readonly resource: string
  readonly token: string
  readonly fence: number
  readonly #context: LeaseContext
  /** Why the lease was lost, its signal, the extensions in flight that stop waiting then. */
  readonly #loss = new LeaseLoss()
  #ttl: number
  #deadline: number
  #state: 'held' | 'released' | 'lost' = 'held'
  readonly #alarms = new LeaseAlarms(
    () => this.#onDeadline(),
    () => this.#renew(),
  )
  #autoExtend: boolean
  #extending: Promise<void> | undefined
  #lastError: unknown
  #abandoned = false
  readonly #acquiredAt: number
  /** Its warnings before a loss: `onAtRisk` listeners, once per failed extension. */
  readonly #risks = new LeaseRisks()
  /** performance.now() after which no renewal goes out (`maxHold`): the lease then ends at its deadline. */
  #holdUntil = Infinity

  constructor(context: LeaseContext, init: LeaseInit) {
    this.#context = context
    this.resource = init.resource
    this.token = init.token
    this.fence = init.fence
    this.#ttl = init.ttl
    this.#autoExtend = init.autoExtend
    this.#deadline = init.start + init.ttl - drift(context, init.ttl)
    this.#acquiredAt = init.start
    this.#schedule()
  }

  /** What this lease shares with the others of its operations (one per primitive backend). */
  get context(): LeaseContext {
    return this.#context
  }

  get signal(): AbortSignal {
    return this.#loss.signal
  }

  get deadline(): number {
    return this.#deadline
  }

  get remaining(): number {
    return this.#state === 'held' ? Math.max(0, this.#deadline - performance.now()) : 0
  }

  get held(): boolean {
    return this.#state === 'held' && performance.now() < this.#deadline
  }

  get ttl(): number {
    return this.#ttl
  }

  extend(ttl: number = this.#ttl): Promise<void> {
    return this.#extend(ttl, this.#context.backend)
  }

  async #extend(ttl: number, via: Extender, auto = false): Promise<void> {
    checkLeaseTtl(ttl, 'ttl', this.#context.maxTtl, this.#context.allowShortTtl)
    if (this.#state === 'lost') throw this.#loss.reason!
    if (this.#state === 'released') throw new LockLostError(this.resource, 'released')
    const start = performance.now()
    if (start >= this.#deadline) {
      // Too late to ask (a blocked event loop kept this from running in time): no request whose
      // silence would read as Redis not answering; the deadline's own verdict.
      this.#expire()
      throw this.#loss.reason!
    }
    let ok: boolean | 'lost' | LockLostError
    this.#risks.extending()
    const extending = via.extend(this.resource, this.token, ttl)
    // An automatic renewal that stays unanswered puts the lease at risk long before its deadline:
    // the renewal alarm, idle while it is in flight, says so once (#renew).
    if (auto) this.#alarms.renewAt(renewalTime(start, this.#ttl, true))
    reportExtend(this.#context.kind, this, ttl, extending)
    try {
      ok = await this.#loss.answerOrLost(extending, start)
    } catch (err) {
      // The backend knows the lease is lost already (a quorum whose majority did not answer).
      if (err instanceof LockLostError) ok = err
      else {
        this.#lastError = err
        const failed = extendFailed(this.resource, err)
        this.#atRisk(failed)
        throw failed
      }
    }
    if (ok === 'lost') throw this.#loss.reason!
    if (this.#state !== 'held') {
      if (this.#state === 'lost') throw this.#loss.reason!
      return // released while the extend was in flight: nothing more to do
    }
    if (ok instanceof LockLostError) {
      this.#lose(ok.reason as LockLostReason, ok.cause)
      throw this.#loss.reason!
    }
    if (!ok) {
      this.#lose('refused')
      throw this.#loss.reason!
    }
    const deadline = start + ttl - drift(this.#context, ttl)
    const now = performance.now()
    if (deadline <= now || this.#deadline <= now) {
      // Redis answered, but too late: after the new ttl (the lock may already be gone), or after
      // the old deadline (read late, see #onDeadline): a lease past its deadline stays lost.
      this.#lose('expired')
      throw this.#loss.reason!
    }
    this.#ttl = ttl
    this.#deadline = deadline
    this.#lastError = undefined
    this.#schedule()
  }

  /** Never throws for a lease already lost or released; one that Redis did not answer in time expires at its ttl. */
  release(): Promise<boolean> {
    return this.#release('release')
  }

  /** A lock taken after its caller stopped waiting (timeout, abort): released, with no release event (nobody held it). */
  giveBack(): void {
    void this.#release('give-back').catch(() => {})
  }

  /** A 'give-back' is no release of a lease anyone held: it publishes no release event. */
  #release(as: 'release' | 'give-back'): Promise<boolean> {
    if (this.#state === 'released') return Promise.resolve(false)
    // A lease that locks.close() let go of (abandoned) is still in Redis: releasing it is a real release.
    const wasHeld = this.#state === 'held' || this.#abandoned
    const left = this.#deadline - performance.now()
    this.#state = 'released'
    this.#alarms.clear()
    this.#context.leases.delete(this)
    return releaseWithin(this, left, this.#ttl, wasHeld, as === 'release')
  }

  /** Redis answered this lease's release (see `Releasing`, lease-release.ts). */
  releaseAnswered(released: boolean, wasHeld: boolean, report: boolean, late: boolean): void {
    if (report) reportRelease(this.#context.kind, this, this.#acquiredAt, wasHeld, released)
    if (!late && !released && wasHeld) this.#gone()
  }

  /** Redis no longer had the held lease that was released: it was lost before. */
  #gone(): void {
    if (this.#loss.reason !== undefined) return
    const reason = performance.now() < this.#deadline ? 'refused' : 'expired'
    this.#loss.abort(new LockLostError(this.resource, reason))
    reportLost(this.#context.kind, this, this.#acquiredAt, reason)
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#state === 'released') return // released by hand in the block: its caller saw the outcome
    // Past the deadline even if the expiry timer has not run yet (a blocked event loop).
    if (this.#state === 'held' && performance.now() >= this.#deadline) this.#expire()
    const lost = this.#state === 'lost'
    const released = await this.release().catch(() => undefined)
    if (lost || released === false) throw this.#loss.reason ?? new LockLostError(this.resource, 'refused')
  }

  /** The lease's loss, if it was lost: for callers that finish work under it (withLock). */
  lostError(): LockLostError | undefined {
    if (this.#state === 'held' && performance.now() >= this.#deadline) this.#expire()
    return this.#state === 'lost' ? this.#loss.reason : undefined
  }

  /** Turns automatic extension on or off (withLock turns it on). */
  setAutoExtend(on: boolean): void {
    this.#autoExtend = on
    if (this.#state === 'held') this.#schedule()
  }

  /** Stops automatic extension `maxHold` ms after the acquire (Infinity: never). */
  limitHold(maxHold: number): void {
    this.#holdUntil = this.#acquiredAt + maxHold
    if (this.#state === 'held') this.#schedule()
  }

  onAtRisk(listener: (risk: LeaseRisk) => void): () => void {
    return this.#risks.add(listener)
  }

  /** An extension failed while the lease is held: its listeners and telemetry hear it, once per failure. */
  #atRisk(error: FencelockError): void {
    if (this.#state !== 'held' || !this.#risks.first()) return
    const remaining = this.remaining
    reportAtRisk(this.#context.kind, this, remaining, error)
    this.#risks.tell(remaining, error)
  }

  /** A revocation notice named this lease's token: the lock was ended in Redis; lost now. */
  revoked(): void {
    this.#lose('revoked')
  }

  /** Marks the lease lost now (used by locks.close()); the lock stays in Redis until its ttl or a release. */
  abandon(reason: LockLostReason): void {
    if (this.#state !== 'held') return
    this.#abandoned = true
    this.#lose(reason)
  }

  #lose(reason: LockLostReason, cause: unknown = this.#lastError): void {
    if (this.#state !== 'held') return
    this.#state = 'lost'
    this.#alarms.clear()
    this.#context.leases.delete(this)
    this.#loss.abort(new LockLostError(this.resource, reason, cause === undefined ? {} : { cause }))
    reportLost(this.#context.kind, this, this.#acquiredAt, reason)
  }

  /**
   * The deadline alarm. With an extension waiting for its reply, the verdict waits one turn of the
   * event loop: a blocked loop may have left the reply unread, and a reply is Redis answering
   * (too late: 'expired', see #extend), not Redis silent.
   */
  #onDeadline(): void {
    if (this.#loss.waitingSince(this.#lateMargin()) === undefined) return this.#expire()
    setImmediate(() => {
      if (this.#state === 'held') this.#expire()
    })
  }

  /** The deadline passed: lost, and why (LeaseLoss.atDeadline). */
  #expire(): void {
    const { reason, cause } = this.#loss.atDeadline(this.#lateMargin(), this.#lastError, (ms) => this.#silentExtension(ms))
    this.#lose(reason, cause)
  }

  /** An extension sent after this (within the drift margin before the deadline) started too late for its silence to say anything about Redis. */
  #lateMargin(): number {
    return this.#deadline - drift(this.#context, this.#ttl)
  }

  /** The error of an extension left `ms` without a reply, with what the client last reported. */
  #silentExtension(ms: number): FencelockError {
    return noReplyError(silenceOf(ms, this.#context.backend), ` to the extension of lock "${this.resource}"`)
  }

  #schedule(): void {
    const now = performance.now()
    const left = this.#deadline - now
    if (left <= 0) {
      this.#alarms.clear()
      return this.#expire()
    }
    this.#alarms.expireAt(this.#deadline, this.#ttl)
    if (!this.#autoExtend) return this.#alarms.renewAt(undefined)
    const renewal = renewalTime(now, this.#ttl, this.#lastError !== undefined)
    this.#alarms.renewAt(renewal.due >= this.#deadline || renewal.due >= this.#holdUntil ? undefined : renewal)
  }

  #renew(): void {
    if (this.#state !== 'held') return
    if (this.#extending) {
      // The renewal in flight has had no reply for a tenth of the ttl (at most a second). The
      // error is built only for someone who listens: a slow Redis under 50,000 leases must not
      // cost 50,000 errors with their stacks.
      const since = this.#loss.waitingSince(Infinity)
      if (since !== undefined && this.#risks.listened()) this.#atRisk(this.#silentExtension(performance.now() - since))
      return
    }
    this.#extending = this.#extend(this.#ttl, this.#context.renewals ?? this.#context.backend, true)
      .catch((err) => {
        // A refused or expired lease is already marked lost; a Redis error retries until the deadline.
        if (err instanceof RedisError && this.#state === 'held') this.#schedule()
      })
      .finally(() => {
        this.#extending = undefined
      })
  }
}
