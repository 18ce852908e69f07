import { ClosedError, InvalidArgumentError, LockTimeoutError, QuorumError } from '../../errors/errors.js'
import { RedlockPrimitive } from '../../primitives/redlock/redlock.js'
import { adapterFor, withScripts, type RedisAdapter } from '../../redis/index.js'
import { ioredisParts, isIORedis } from '../../redis/ioredis.js'
import { Operations } from '../../runtime/operations.js'
import { Runtime } from '../../runtime/runtime.js'
import type { AcquireStats } from '../../runtime/waiter.js'
import type { Lease } from '../../runtime/lease.js'
import type { Backend, LockInfo } from '../../topology/backend.js'
import type { Primitive } from '../../topology/primitive.js'
import { defaultNodeTimeout } from '../../topology/quorum/options.js'
import { QuorumBackend } from '../../topology/quorum/quorum.js'
import { SingleBackend } from '../../topology/single.js'
import { checkResource } from '../../util/validate.js'
import { ResourceLockedError, attemptsOf, type ExecutionStats } from './errors.js'
import { tracked, type Tracked } from './in-flight.js'
import type { Lock, LockOwner } from './lock.js'
import { waitBudget, type Checked } from './settings.js'

/**
 * The longest lock: node-redlock takes any ttl (its own tests lock for MAX_SAFE_INTEGER / 10 ms
 * as "until released"), and so does the drop-in, up to what Redis' PX and a double keep exact.
 */
const LONGEST_LOCK = Number.MAX_SAFE_INTEGER

export const QUORUM_FAILED = 'The operation was unable to achieve a quorum during its retry window.'
export const DURATION = 'Duration must be an integer value in milliseconds.'

/** How the lease of one or several resources is named for the runtime (the primitive reads it back). */
const nameOf = (resources: readonly string[]): string => (resources.length > 1 ? JSON.stringify(resources) : resources[0]!)

function checkResources(value: unknown): string[] {
  const list = Array.isArray(value) ? (value as unknown[]) : [value]
  if (list.length === 0) throw new InvalidArgumentError('Expected `resources` to hold at least one resource name, got []')
  return list.map((r) => checkResource(r))
}

/** What the core asks of the `Redlock` it serves: its public fields (read when used, as node-redlock reads them) and its events. */
export interface RedlockOwner extends LockOwner {
  readonly servers: unknown[]
  readonly settings: Checked
  readonly retryCount: number
  readonly driftFactor: number
  emit(event: string, ...args: unknown[]): boolean
}

/**
 * What both API generations (v4.ts, v5.ts) share: the runtime, the topology over the clients, and
 * the acquire, release and extend of one or several resources that report the clients' errors as
 * node-redlock's events.
 */
export class RedlockCore {
  readonly owner: RedlockOwner
  readonly runtime: Runtime
  readonly #topology: (primitive: Primitive<unknown, LockInfo>) => Backend<LockInfo>
  readonly #one: Operations<LockInfo>
  #all: Operations<LockInfo> | undefined
  /** Per primitive (one resource, several): waits until its calls for a resource are answered. */
  readonly #settled = new Map<boolean, Tracked['settled']>()
  readonly #nodeTimeout: number

  constructor(owner: RedlockOwner) {
    this.owner = owner
    this.runtime = new Runtime({
      ttl: 10_000,
      wait: waitBudget(owner.settings),
      driftFactor: owner.settings.driftFactor,
      waiterGrace: 500,
      allowShortTtl: true,
      tryTimeout: 2_000,
      maxHold: Infinity,
    })
    const servers = owner.servers
    const adapters = servers.map((c, i) => adapterOf(c, servers.length > 1 ? `clients[${i}]` : 'client'))
    const nodeTimeout = defaultNodeTimeout
    this.#nodeTimeout = nodeTimeout(10_000)
    this.#topology =
      adapters.length === 1
        ? (primitive) => new SingleBackend(adapters[0]!, primitive, LONGEST_LOCK)
        : (primitive) => new QuorumBackend(adapters, primitive, { maxTtl: LONGEST_LOCK, nodeTimeout, restartWindow: 0 })
    this.#one = new Operations(this.runtime, this.#topology(this.#primitive(false)), 'mutex')
  }

  #primitive(several: boolean): Primitive<unknown, LockInfo> {
    const s = this.owner.settings
    const { primitive, settled } = tracked(
      new RedlockPrimitive({ fenceRetention: 86_400_000, waiterGrace: 500, db: s.db, recheck: Math.max(10, s.retryDelay) }, several),
    )
    this.#settled.set(several, settled)
    return primitive
  }

  #ops(resources: readonly string[]): Operations<LockInfo> {
    if (resources.length === 1) return this.#one
    this.#all ??= new Operations(this.runtime, this.#topology(this.#primitive(true)), 'multi', '', (name) => name as string)
    return this.#all
  }

  /** The lease of `resources` (one, or several all or nothing), waiting at most the settings' budget; counts the attempts into `stats`. */
  async take(resources: string[], ttl: number, s: Checked, stats: AcquireStats): Promise<Lease> {
    const names = checkResources(resources)
    try {
      return await this.#ops(names).acquireCounting(nameOf(names), { ttl, wait: waitBudget(s) }, stats)
    } catch (error) {
      this.#clientErrors(error)
      // As node-redlock: the error comes once the last attempt's grants are undone, not before.
      await this.#settled.get(names.length > 1)?.(nameOf(names), this.#nodeTimeout)
      throw error
    }
  }

  /**
   * v5's `attempts`: one promise of the votes per attempt (the last one won when `won`). A vote
   * against carries what the client said (`failure`'s first cause that is not fencelock's), or
   * `ResourceLockedError` where another lock held the resources.
   */
  attempts(count: number, won: boolean, resources = 1, failure?: unknown): Promise<ExecutionStats>[] {
    const n = this.owner.servers.length
    const against = (i: number): Error | Promise<Error> => {
      const cause = clientCause(failure, i)
      if (cause instanceof ClosedError && cause.code === 'CLIENT_CLOSED') return ownError(this.owner.servers[i], cause)
      return cause ?? new ResourceLockedError(`The operation was applied to: 0 of the ${resources} requested resources.`)
    }
    return attemptsOf(count, () => ({ membershipSize: n, quorumSize: Math.floor(n / 2) + 1, votesFor: new Set(), votesAgainst: new Map() })).map((p, a) =>
      p.then(async (stats) => {
        for (const [i, client] of this.owner.servers.entries()) {
          if (won && a === count - 1) stats.votesFor.add(client)
          else stats.votesAgainst.set(client, await against(i))
        }
        return stats
      }),
    )
  }

  /** Attempts a failed acquisition reports: as many as node-redlock's retries would have made in the budget that ran out. */
  failedAttempts(error: unknown, sent: number, s: Checked): number {
    return error instanceof InvalidArgumentError || s.retryCount === -1 ? sent : s.retryCount + 1
  }

  /** What the clients said went wrong, as node-redlock's events tell it: `clientError` (v4) and `error` (v5). */
  #clientErrors(error: unknown): void {
    const causes = error instanceof QuorumError ? error.votes.flatMap((v) => (v.outcome === 'error' && v.cause ? [v.cause] : [])) : []
    if (!(error instanceof QuorumError) && error instanceof Error && error.name === 'RedisError') causes.push(error.cause ?? error)
    for (const cause of causes) {
      this.owner.emit('clientError', cause)
      this.owner.emit('error', cause)
    }
  }

  /** Releases on the resource and value the lock names now (node-redlock reads them at call time). */
  async release(lock: Lock): Promise<boolean> {
    lock.expiration = 0
    const names = checkResources(lock.resource)
    try {
      return await this.#ops(names).release(nameOf(names), lock.value)
    } catch (error) {
      this.#clientErrors(error)
      throw error
    }
  }

  async extend(lock: Lock, ttl: number): Promise<boolean> {
    const names = checkResources(lock.resource)
    try {
      return await this.#ops(names).extend(nameOf(names), lock.value, ttl)
    } catch (error) {
      this.#clientErrors(error)
      throw error
    }
  }
}

/**
 * Why client `i` voted against, as node-redlock tells it: the client's own error (a quorum's vote
 * for that node, or the innermost cause), fencelock's error where there is none (a closed client),
 * or undefined where the lock was simply held (the budget ran out: `ResourceLockedError`).
 */
function clientCause(failure: unknown, i: number): Error | undefined {
  if (failure === undefined || failure instanceof LockTimeoutError) return undefined
  if (failure instanceof QuorumError) {
    const cause = failure.votes.find((v) => v.node === i)?.cause
    return cause instanceof Error ? cause : undefined
  }
  let error = failure
  while (error instanceof Error && error.cause instanceof Error) error = error.cause
  return error instanceof Error ? error : undefined
}

/**
 * The adapter of a client, as createLocks makes it, except that an ioredis client that has ended
 * is taken too: node-redlock takes it (its own test makes one that never connects), and each of
 * its calls then fails with the client's own error, which becomes that node's vote against.
 */
function adapterOf(client: unknown, name: string): RedisAdapter {
  try {
    return adapterFor(client, name)
  } catch (err) {
    if (err instanceof ClosedError && isIORedis(client)) return withScripts(ioredisParts(client))
    throw err
  }
}

/** How long a closed client may take to refuse a PING (it refuses at once; this only bounds a surprise). */
const OWN_ERROR_MS = 100

/**
 * What a client that fencelock found closed says itself when asked anything: node-redlock's vote
 * carries the client's error ("Connection is closed." from ioredis, `ClientClosedError` from
 * node-redis), not fencelock's (whose hint to connect is node-redis's). A closed client refuses a
 * PING without sending it; `fallback` where it answers or cannot be asked.
 */
async function ownError(client: unknown, fallback: Error): Promise<Error> {
  const ping = (client as { ping?: unknown }).ping
  if (typeof ping !== 'function') return fallback
  let timer: NodeJS.Timeout | undefined
  try {
    const reply: unknown = ping.call(client)
    if (!(reply instanceof Promise)) return fallback
    const late = new Promise<Error>((resolve) => (timer = setTimeout(() => resolve(fallback), OWN_ERROR_MS)))
    return await Promise.race([
      reply.then(
        () => fallback,
        (err: unknown) => (err instanceof Error ? err : fallback),
      ),
      late,
    ])
  } catch (err) {
    return err instanceof Error ? err : fallback
  } finally {
    clearTimeout(timer)
  }
}
