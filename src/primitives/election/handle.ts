import { FencelockError, InvalidArgumentError, LockLostError } from '../../errors/errors.js'
import { delegatingLease, holding, lossOf, type Lease } from '../../runtime/lease.js'
import type { Operations } from '../../runtime/operations.js'
import { revokeEach } from '../../runtime/by-token.js'
import { acquireOptionsOf } from '../../runtime/options.js'
import type { WakeSource } from '../../topology/backend.js'
import {
  checkFunction,
  checkLeaseTtl,
  checkMaxHold,
  checkOptions,
  checkSignal,
  checkWait,
  describeValue,
  MAX_RESOURCE_LENGTH,
  optionNames,
} from '../../util/validate.js'
import { campaignName, proclaimName, type ElectionInfo, type Leader, type LeaderInfo } from './election.js'
import { observeElection } from './observe.js'

export type { ElectionInfo, Leader, LeaderInfo } from './election.js'

/** Options of `locks.election(name, options)`: the defaults of its campaigns. */
export interface ElectionOptions {
  /** The term's ttl in ms: how long a dead leader keeps the election. Default: the instance's `ttl`. */
  ttl?: number
  /** How long a campaign waits in ms (`Infinity`: until elected). Default: the instance's `wait`. */
  wait?: number
  /** Auto-extension of a term stops this long after it began (ms). Default: the instance's `maxHold` (off). */
  maxHold?: number
}

/** Options of one campaign; each one left out takes the election's (then the instance's). */
export interface CampaignOptions extends ElectionOptions {
  /** Aborts the campaign while it waits, with `LockAbortedError`. */
  signal?: AbortSignal
  /** A term is always auto-extended while it leads (`maxHold` bounds how long): `true` changes nothing, `false` is refused. */
  autoExtend?: true
}

/**
 * A leadership: the `Lease` of the election (auto-extended while held; `await using` resigns at
 * the end of the block). `fence` is the term: strictly larger than every earlier term of this
 * election; guard the leader's writes with it (claimFence, fencedSet, SQL) so that a resource
 * refuses a leader that lost its term. `signal` aborts when leadership is lost.
 */
export interface Term extends Lease {
  /** The election's name. */
  readonly resource: string
  /** The value observers see: the campaign's, or the last proclaimed. */
  readonly value: string
  /**
   * Changes the leader's value in this term (same fence); observers are told. Rejects with
   * `LockLostError` if this term no longer leads.
   */
  proclaim(value: string): Promise<void>
  /** Gives up leadership: the next candidate in line is elected at once. Same as `release()`. */
  resign(): Promise<boolean>
}

/** Leader election: one leader at a time, elected in the order candidates came (see docs/election.md). */
export interface Election {
  /** The name given to `locks.election(name, ...)`. */
  readonly name: string
  /** Waits (event-driven, FIFO, at most `wait` ms) until this caller leads with `value`; rejects as `acquire` does. */
  campaign(value: string, options?: CampaignOptions): Promise<Term>
  /** Campaigns, runs `fn` as the leader (its term auto-extended), and resigns whatever happens (as `withLock`). */
  withLeadership<T>(value: string, fn: (term: Term) => Promise<T> | T, options?: CampaignOptions): Promise<T>
  /** The leader now, or null when vacant (on a quorum: the leader a majority holds). */
  leader(): Promise<LeaderInfo | null>
  /**
   * The leader now, then every change (new term, proclamation, vacancy as null), in order, pushed;
   * never a term older than one already yielded. Ends when `signal` aborts or the instance closes.
   */
  observe(options?: { signal?: AbortSignal }): AsyncGenerator<Leader | null, void, undefined>
  /** Leader, last term handed out, candidates in line. */
  inspect(): Promise<ElectionInfo>
  /**
   * Ends the leader's term (without `token`: the leader `inspect` reads now) and tells the leader at
   * once: its term's signal aborts with `LockLostError`, reason `'revoked'` (see `Locks.revoke`);
   * the next candidate in line is elected. Resolves with the tokens it ended.
   */
  revoke(token?: string): Promise<readonly string[]>
}

const MAX_VALUE_LENGTH = 512

function checkValue(name: string, value: unknown): string {
  // An empty value would show observers a leader that says nothing (and `leader()` a value of '').
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_VALUE_LENGTH)
    throw new InvalidArgumentError(`Expected \`value\` to be a non-empty string of at most ${MAX_VALUE_LENGTH} characters, got ${describeValue(value)}`)
  // The value rides in the resource name (see election.ts): both must fit its limit.
  if (proclaimName(name, value, Number.MAX_SAFE_INTEGER).length > MAX_RESOURCE_LENGTH) {
    throw new InvalidArgumentError(
      `Expected election name and \`value\` together to be shorter, got a name of ${name.length} and a value of ${value.length} characters`,
    )
  }
  return value
}

const ALWAYS_EXTENDED = 'a term is always auto-extended while it leads (`maxHold` bounds how long); to end it, resign()'

/** The names `checkOptions` accepts (tsc checks the lists against the types). */
const ELECTION_OPTIONS = optionNames<ElectionOptions>(
  'election',
  { ttl: true, wait: true, maxHold: true },
  { autoExtend: ALWAYS_EXTENDED, signal: 'a signal belongs to one campaign: campaign(value, { signal })' },
)
const CAMPAIGN_OPTIONS = optionNames<CampaignOptions>(
  'campaign',
  { ttl: true, wait: true, maxHold: true, signal: true, autoExtend: true },
  { timeout: 'did you mean `wait` (how long to campaign, in ms)?' },
)

/** The election options, checked; `maxTtl` bounds the ttl as for any lease. */
export function checkElectionOptions(options: unknown, maxTtl: number, allowShortTtl: boolean): ElectionOptions {
  checkOptions(options, ELECTION_OPTIONS)
  const { ttl, wait, maxHold } = (options ?? {}) as ElectionOptions
  return {
    ...(ttl === undefined ? {} : { ttl: checkLeaseTtl(ttl, 'ttl', maxTtl, allowShortTtl) }),
    ...(wait === undefined ? {} : { wait: checkWait(wait) }),
    ...(maxHold === undefined ? {} : { maxHold: checkMaxHold(maxHold) }),
  }
}

/**
 * `work`, its error naming the election: the runtime knows a call by the resource name it rides in
 * (`["scheduler","host-a"]`, see election.ts), which means nothing to the caller.
 */
function naming<T>(name: string, resource: string, work: Promise<T>): Promise<T> {
  return work.catch((err: unknown) => {
    if (!(err instanceof FencelockError)) throw err
    const inner = `lock "${resource}"`
    const outer = `election "${name}"`
    err.message = err.message.replaceAll(inner, outer)
    if (typeof err.stack === 'string') err.stack = err.stack.replaceAll(inner, outer)
    if ((err as { resource?: unknown }).resource === resource) Object.defineProperty(err, 'resource', { value: name })
    throw err
  })
}

export interface ElectionParts {
  readonly ops: Operations<ElectionInfo>
  readonly wake: WakeSource
  readonly observers: string
  readonly consensus: boolean
  /** Aborts when the locks instance closes: observers end then. */
  readonly closing: AbortSignal
}

function termOf(name: string, lease: Lease, value: string, ops: Operations<ElectionInfo>): Term {
  let current = value
  let version = 0
  let proclaiming: Promise<void> = Promise.resolve()
  const proclaim = async (next: string) => {
    if (!lease.held) throw lossOf(lease) ?? new LockLostError(name, 'refused')
    const v = ++version
    // Proclamations go out one at a time, so observers see them in the order they were made.
    const sent = proclaiming.then(async () => {
      if (!(await ops.extend(proclaimName(name, next, v), lease.token, lease.ttl))) throw new LockLostError(name, 'refused')
      current = next
    })
    proclaiming = sent.catch(() => {})
    return sent
  }
  return delegatingLease(lease, {
    get resource() {
      return name
    },
    get value() {
      return current
    },
    // A rejection for a bad value too, as for a lost term: one way for a caller to hear of it.
    proclaim: async (next: string) => proclaim(checkValue(name, next)),
    resign: () => lease.release(),
  }) as Term
}

export function electionHandle(name: string, defaults: ElectionOptions, parts: ElectionParts): Election {
  const { ops } = parts
  const inspect = () => naming(name, campaignName(name, ''), ops.inspect(campaignName(name, '')))
  const campaign = async (value: string, options: CampaignOptions = {}): Promise<Term> => {
    checkValue(name, value)
    checkOptions(options, CAMPAIGN_OPTIONS)
    if (options.autoExtend !== undefined && options.autoExtend !== true)
      throw new InvalidArgumentError(`Expected \`autoExtend\` to be true or left out: ${ALWAYS_EXTENDED}; got ${describeValue(options.autoExtend)}`)
    const resource = campaignName(name, value)
    const lease = await naming(
      name,
      resource,
      ops.acquireLease(
        resource,
        acquireOptionsOf(options.ttl ?? defaults.ttl, options.wait ?? defaults.wait, options.signal, true, options.maxHold ?? defaults.maxHold),
      ),
    )
    return termOf(name, lease, value, ops)
  }
  return {
    name,
    campaign,
    async withLeadership(value, fn, options) {
      checkFunction(fn, 'fn')
      return holding(await campaign(value, options), fn)
    },
    leader: async () => (await inspect()).leader,
    observe(options = {}) {
      checkOptions(options)
      const signal = checkSignal(options.signal)
      const ended = signal ? AbortSignal.any([signal, parts.closing]) : parts.closing
      return observeElection({ wake: parts.wake, channel: parts.observers, read: inspect, consensus: parts.consensus }, ended)
    },
    inspect,
    async revoke(token) {
      const tokens = token !== undefined ? [token] : [(await inspect()).token].filter((t) => t !== null)
      return revokeEach(tokens, (t) => ops.revoke(campaignName(name, ''), t))
    },
  }
}
