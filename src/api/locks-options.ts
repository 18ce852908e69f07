import { hostname } from 'node:os'
import { InvalidArgumentError } from '../errors/errors.js'
import type { RedisClient } from '../redis/client-types.js'
import type { QuorumOptions } from '../topology/quorum/options.js'
import type { ReplicasOptions } from '../topology/replicated.js'
import { adapterFor } from '../redis/index.js'
import type { RedisAdapter } from '../redis/adapter.js'
import { defaultNodeTimeout } from '../topology/quorum/options.js'
import {
  checkBoolean,
  checkLeaseTtl,
  checkMaxHold,
  checkNumber,
  checkOptions,
  checkStringOrEmpty,
  checkTtl,
  checkWait,
  describeValue,
  MAX_TTL,
  optionNames,
  readOptions,
  type OptionSchema,
} from '../util/validate.js'

/** What `createLocks` takes. */
export interface LocksOptions {
  /**
   * An ioredis, iovalkey or node-redis client (single node, cluster or sentinel), or an array of
   * clients of independent masters for quorum mode. The caller keeps owning it.
   */
  redis: RedisClient | readonly RedisClient[]
  /** Prefix of every key. Default: `'fencelock:'`. */
  prefix?: string
  /**
   * The label every lease of this instance records in Redis beside its token, so that `inspect`
   * (and `fencelock inspect`) can say who holds a lock, since when and when it last extended it:
   * 1 to 64 printable characters (no control characters). Default: `` `${os.hostname()}:${process.pid}` ``
   * (the host name shortened to fit). Give it a name an operator recognises (a pod's name, a
   * service and its instance); it is not checked for uniqueness and decides nothing.
   */
  holder?: string
  /** Default lease ttl in ms. Default: `10_000`. */
  ttl?: number
  /** Default wait budget of `acquire` in ms. Default: `15_000` (longer than one default ttl). */
  wait?: number
  /** Share of the ttl assumed lost to clock drift; validity = ttl - elapsed - (ttl * driftFactor + 2 ms). Default: `0.01`. */
  driftFactor?: number
  /**
   * How long a resource's fence key is kept after its last acquisition (ms). The fence is floored by
   * the server's clock; the key only guards against that clock stepping back by more than the time
   * since the resource was last locked, so a day covers any realistic step. Default: 1 day.
   */
  fenceRetention?: number
  /**
   * How long a queued waiter keeps its place past its next re-check, and a woken waiter past the
   * release, before it counts as dead and the line moves on (ms). Default: a quarter of `ttl`,
   * from 100 ms to 2 s.
   */
  waiterGrace?: number
  /**
   * Longest ttl any lease may ask for, in ms (a longer one is an `InvalidArgumentError`). In quorum
   * mode it is also how long a restarted node stays out of quorum counting, so keep it small.
   * Default: `30_000` with an array of clients, 24 days otherwise.
   */
  maxTtl?: number
  /**
   * Accept lease ttls (`ttl`, `maxTtl`, and the ttl of acquire, tryAcquire, withLock and extend)
   * below 100 ms. Without it they are refused with `InvalidArgumentError`: a ttl that short is
   * nearly always seconds written as milliseconds (`ttl: 30`), and such a lease spends its life
   * renewing. Default: `false`.
   */
  allowShortTtl?: boolean
  /**
   * A `withLock` nested in the `fn` of another `withLock` of the same resource (the same call
   * chain: awaits, promise callbacks and timers created inside `fn`; not another concurrent call of
   * this process, not a worker thread) re-enters it: the nested call gets the outer lease (same
   * token, fence and signal) at once, and only the outermost release frees the lock. Without it,
   * such a nested acquire, tryAcquire or withLock rejects at once with `LockReentryError` instead of
   * waiting for itself. Default: `false`.
   */
  reentrant?: boolean
  /**
   * How long `tryAcquire` waits for Redis' answer before it rejects with `RedisError` (ms). It
   * never waits for the lock, so it should not wait long for Redis either. Default: `2_000` (less
   * if the lease validity is shorter).
   */
  tryTimeout?: number
  /**
   * Automatic extension (withLock, `autoExtend`, an election's term) stops this long after the
   * acquire, in ms: a holder that hangs with its event loop alive cannot keep a lock or a
   * leadership forever; the lease ends at its deadline, at most one ttl later, and its signal
   * aborts. Per call: `maxHold` of acquire, tryAcquire, withLock, campaign. `Infinity`: off.
   * Default: off.
   */
  maxHold?: number
  /** Quorum mode only. */
  quorum?: QuorumOptions
  /**
   * Single-Redis mode only (not a cluster): every acquire and extension is followed by
   * `WAIT count timeout` on the same connection; with fewer acknowledgements the lock is released
   * and acquire fails with `ReplicationError` (an extension fails, keeping the old deadline).
   */
  replicas?: ReplicasOptions
}

const LOCKS_OPTIONS = optionNames<LocksOptions>(
  'createLocks',
  {
    redis: true,
    prefix: true,
    holder: true,
    ttl: true,
    wait: true,
    driftFactor: true,
    fenceRetention: true,
    waiterGrace: true,
    maxTtl: true,
    allowShortTtl: true,
    reentrant: true,
    tryTimeout: true,
    quorum: true,
    replicas: true,
    maxHold: true,
  },
  {
    client: 'did you mean `redis` (the client)?',
    url: 'fencelock takes a client, not a URL: pass `redis: new Redis(url)` (ioredis) or a connected node-redis client',
  },
)

/** `createLocks`' argument: an object (its option names are checked with the schema). */
function checkLocksObject(options: unknown): asserts options is LocksOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    const quorum = Array.isArray(options) ? ': for quorum mode, pass the clients as { redis: [client1, client2, client3] }' : ''
    throw new InvalidArgumentError(`Expected \`options\` to be an object { redis, ... }, got ${describeValue(options)}${quorum}`)
  }
}

/** Where the locks run, with every client's adapter detected (once, here). */
export type TopologyChoice =
  | { readonly kind: 'single'; readonly redis: RedisAdapter }
  | { readonly kind: 'replicated'; readonly redis: RedisAdapter; readonly replicas: { readonly count: number; readonly timeout: number } }
  | { readonly kind: 'quorum'; readonly adapters: readonly RedisAdapter[]; readonly nodeTimeout: (ttl: number) => number }

/** `createLocks`' options, checked, with their defaults: what every part below reads, and nothing re-checks. */
export interface CheckedLocksOptions {
  readonly topology: TopologyChoice
  readonly prefix: string
  readonly holder: string
  readonly allowShortTtl: boolean
  readonly maxTtl: number
  readonly ttl: number
  readonly wait: number
  readonly tryTimeout: number
  readonly driftFactor: number
  readonly fenceRetention: number
  readonly waiterGrace: number
  readonly maxHold: number
  readonly reentrant: boolean
}

const DAY = 86_400_000

/**
 * `createLocks`' options, field by field, in the order they are checked: each value's check (a bad
 * one throws `InvalidArgumentError` naming it) and its default. `topology` reads `redis` (and
 * `quorum`, `replicas`) last: the clients' adapters are detected there, once.
 */
const LOCKS_SCHEMA: OptionSchema<CheckedLocksOptions, LocksOptions> = {
  prefix: { fallback: () => 'fencelock:', check: checkStringOrEmpty },
  holder: { fallback: () => defaultHolder(), check: checkHolder },
  allowShortTtl: { fallback: () => false, check: checkBoolean },
  maxTtl: {
    fallback: (_, options) => (Array.isArray(options.redis) ? 30_000 : MAX_TTL),
    check: (value, name, read) => checkLeaseTtl(value, name, MAX_TTL, read.allowShortTtl),
  },
  ttl: {
    fallback: (read) => Math.min(10_000, read.maxTtl!),
    check: (value, name, read) => checkLeaseTtl(value, name, read.maxTtl, read.allowShortTtl),
  },
  wait: { fallback: () => 15_000, check: checkWait },
  tryTimeout: { fallback: () => 2_000, check: (value, name) => checkTtl(value, name) },
  driftFactor: { fallback: () => 0.01, check: (value, name) => checkNumber(value, name, 0, 0.5) },
  fenceRetention: { fallback: () => DAY, check: (value, name) => checkTtl(value, name) },
  // A dead waiter keeps the line waiting this long past the holder's ttl: scale it with the ttl.
  waiterGrace: { fallback: (read) => Math.min(2_000, Math.max(100, Math.round(read.ttl! / 4))), check: (value, name) => checkTtl(value, name, 60_000) },
  maxHold: { fallback: () => Infinity, check: checkMaxHold },
  reentrant: { fallback: () => false, check: checkBoolean },
  topology: { from: 'redis', fallback: (_, options) => topologyChoice(options), check: (_, __, ___, options) => topologyChoice(options) },
}

/**
 * `createLocks`' options read in one place, by `LOCKS_SCHEMA`: the object, its option names, each
 * value, the defaults, and the clients' adapters. Frozen; nothing below checks them again.
 */
export function readLocksOptions(options: unknown): CheckedLocksOptions {
  checkLocksObject(options)
  return readOptions(options, LOCKS_OPTIONS, LOCKS_SCHEMA)
}

/** Longest holder label, in characters (code points): it is stored with every held lock. */
export const MAX_HOLDER_LENGTH = 64

// Control characters (C0, DEL, C1) would garble the CLI's table and a log line: a label is printable.
const CONTROL = /\p{Cc}/u

/** The `holder` option: 1 to 64 printable characters. */
function checkHolder(value: unknown): string {
  const length = typeof value === 'string' ? [...value].length : 0
  const control = typeof value === 'string' ? CONTROL.exec(value) : null
  if (typeof value !== 'string' || length === 0 || length > MAX_HOLDER_LENGTH || control) {
    // A control character may not show in the value as printed: name it.
    const which = control ? ` (U+${control[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} at index ${control.index})` : ''
    throw new InvalidArgumentError(
      `Expected \`holder\` to be a label of 1 to ${MAX_HOLDER_LENGTH} printable characters (no control characters), got ${describeValue(value)}${which}`,
    )
  }
  return checkStringOrEmpty(value, 'holder')
}

/** `hostname:pid`, the host name shortened to 56 characters so that it fits (a pid has at most 7 digits). */
const defaultHolder = (): string => `${[...hostname()].slice(0, 56).join('')}:${process.pid}`

/** One client (plain, or followed by WAIT), or a quorum of several: checked, with each client's adapter. */
function topologyChoice(options: LocksOptions): TopologyChoice {
  if (!Array.isArray(options.redis)) {
    const redis = adapterFor(options.redis)
    if (options.quorum !== undefined) throw new InvalidArgumentError('Expected `quorum` only with an array of clients (quorum mode)')
    if (options.replicas === undefined) return { kind: 'single', redis }
    const replicas = checkReplicas(options.replicas)
    if (redis.isCluster)
      throw new InvalidArgumentError("Expected `replicas` with a single Redis, not a cluster client (WAIT cannot be routed to the lock's node)")
    return { kind: 'replicated', redis, replicas }
  }
  if (options.replicas !== undefined)
    throw new InvalidArgumentError('Expected `replicas` only with a single client: in quorum mode the majority is the replication')
  const clients = options.redis as unknown[]
  const adapters = clients.map((client, i) => adapterFor(client, `redis[${i}]`))
  if (adapters.length === 0) throw new InvalidArgumentError('Expected `redis` to hold at least one client, got an empty array')
  if (new Set(adapters).size !== adapters.length)
    throw new InvalidArgumentError('Expected `redis` to hold distinct clients (one per independent Redis master), got the same client twice')
  return { kind: 'quorum', adapters, nodeTimeout: quorumNodeTimeout(options.quorum) }
}

const QUORUM_OPTIONS = optionNames<QuorumOptions>('createLocks `quorum`', { nodeTimeout: true })

/** The per-node timeout for a given ttl: fixed if the caller chose one, else a tenth of the ttl (10 to 1,000 ms). */
function quorumNodeTimeout(options: unknown): (ttl: number) => number {
  if (options === undefined) return defaultNodeTimeout
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError(`Expected \`quorum\` to be an object, got ${describeValue(options)}`)
  }
  checkOptions(options, QUORUM_OPTIONS, 'quorum')
  const { nodeTimeout } = options as { nodeTimeout?: unknown }
  if (nodeTimeout === undefined) return defaultNodeTimeout
  const fixed = checkTtl(nodeTimeout, 'quorum.nodeTimeout')
  return () => fixed
}

const REPLICAS_OPTIONS = optionNames<ReplicasOptions>('createLocks `replicas`', { count: true, timeout: true })

/** `createLocks({ replicas })` checked: an object of a count (1 to 1000) and a timeout. */
function checkReplicas(options: unknown): { count: number; timeout: number } {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError(`Expected \`replicas\` to be an object { count, timeout }, got ${describeValue(options)}`)
  }
  checkOptions(options, REPLICAS_OPTIONS, 'replicas')
  const { count, timeout } = options as { count?: unknown; timeout?: unknown }
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 1_000) {
    throw new InvalidArgumentError(`Expected \`replicas.count\` to be an integer from 1 to 1000, got ${describeValue(count)}`)
  }
  return { count, timeout: checkTtl(timeout, 'replicas.timeout') }
}
