import { InvalidArgumentError } from '../errors/errors.js'
import type { RedisClient } from '../redis/client-types.js'
import type { QuorumOptions } from '../topology/quorum/options.js'
import type { ReplicasOptions } from '../topology/replicated.js'
import { checkOptions, describeValue, optionNames } from '../util/validate.js'

/** What `createLocks` takes. */
export interface LocksOptions {
  /**
   * An ioredis, iovalkey or node-redis client (single node, cluster or sentinel), or an array of
   * clients of independent masters for quorum mode. The caller keeps owning it.
   */
  redis: RedisClient | readonly RedisClient[]
  /** Prefix of every key. Default: `'fencelock:'`. */
  prefix?: string
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

/** `createLocks`' argument: an object with known option names (each value is checked where it is read). */
export function checkLocksOptions(options: unknown): asserts options is LocksOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    const quorum = Array.isArray(options) ? ': for quorum mode, pass the clients as { redis: [client1, client2, client3] }' : ''
    throw new InvalidArgumentError(`Expected \`options\` to be an object { redis, ... }, got ${describeValue(options)}${quorum}`)
  }
  checkOptions(options, LOCKS_OPTIONS)
}
