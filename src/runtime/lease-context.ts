import type { Backend } from '../topology/backend.js'
import type { LockKind } from '../util/telemetry.js'
import type { Renewals } from './renewals.js'
import type { HeldLeases } from './held-leases.js'

/**
 * What every lease of one primitive's operations shares (one per `Operations`): its backend, which
 * it calls directly, and the facts that bound its validity. Data, not a layer of forwarding calls.
 */
export interface LeaseContext {
  readonly backend: Backend<unknown>
  /** Automatic renewals go out batched through it where the primitive and topology allow (renewals.ts). */
  readonly renewals: Renewals | undefined
  /** Longest ttl (quorum mode bounds it by `maxTtl`). */
  readonly maxTtl: number
  /** Ttls below the 100 ms floor are accepted (`allowShortTtl`). */
  readonly allowShortTtl: boolean
  /** Share of every ttl taken off the validity window (clock drift between client and Redis). */
  readonly driftFactor: number
  /** The primitive, for telemetry ('mutex', 'semaphore', 'read', 'write', 'multi'). */
  readonly kind: LockKind
  /** The instance's held leases: a lease leaves it once released or lost. */
  readonly leases: HeldLeases
}

/** Safety margin subtracted from every validity window of `ttl` ms. */
export const drift = (context: LeaseContext, ttl: number): number => Math.floor(ttl * context.driftFactor) + 2

/** What an extension is sent through: the backend itself, or the batched renewals (same contract). */
export interface Extender {
  extend(resource: string, token: string, ttl: number): Promise<boolean>
}

export interface LeaseInit {
  resource: string
  token: string
  fence: number
  ttl: number
  /** performance.now() taken before the acquire request was sent. */
  start: number
  autoExtend: boolean
}
