import { KeyedPrimitive } from '../keyed.js'
import type { Arg, Exec, ReplyOf } from '../../lua/binding.js'
import type { Into } from '../../util/into.js'
import { multiAcquire, multiConfirm, multiExtend, multiExtendMany, multiLeave, multiRelease } from '../../lua/embedded.js'
import type { LockInfo } from '../../topology/backend.js'
import type { AttemptRequest, ExtendItem, NodeGrant, Primitive, Released } from '../../topology/primitive.js'
import { decodeMany, decodeRelease, isOne, toNumber, grantOf } from '../decode.js'
import { inspectLock, mergeLock, mutexKeys, type MutexKeys } from '../lock.js'

export interface MultiOptions {
  prefix: string
  /** How long the fence keys outlive their last use (ms). */
  fenceRetention: number
  /** How long past its next re-check a queued waiter keeps its place (ms). */
  waiterGrace: number
  /** The label each lease records beside its token (see `HolderInfo`): `createLocks`' `holder`. */
  holder: string
}

/**
 * The name under which an all-or-nothing lock of several resources runs (its waiters queue, its
 * lease is known, messages and telemetry name it): the sorted, distinct names, each JSON-escaped,
 * joined by `", "`, so that `lock "${name}"` reads `lock "a", "b"`. A `"` inside a name is always
 * escaped, so the separator cannot occur in one and the names parse back. Sorted, so that [a, b]
 * and [b, a] are one lock, and so that the ordered fallback takes them in one global order.
 */
export const multiName = (resources: readonly string[]): string =>
  [...new Set(resources)]
    .sort()
    .map((r) => JSON.stringify(r).slice(1, -1))
    .join('", "')
export const multiResources = (name: string): string[] => JSON.parse(`["${name}"]`) as string[]

/** The mutexes' keys of every resource, and the lists the scripts take, built once per name (not per call). */
interface Keys {
  readonly locks: readonly MutexKeys[]
  /** Each resource's lock, fence, queue and queue expiry keys in turn. */
  readonly four: readonly string[]
  /** Each resource's lock, queue and queue expiry keys in turn. */
  readonly three: readonly string[]
  readonly lockKeys: readonly string[]
  readonly channels: readonly string[]
}

function keysWithLists(prefix: string, name: string): Keys {
  const locks = multiResources(name).map((r) => mutexKeys(prefix, r))
  return {
    locks,
    four: locks.flatMap((k) => [k.lock, k.fence, k.queue, k.queueExpiry]),
    three: locks.flatMap((k) => [k.lock, k.queue, k.queueExpiry]),
    lockKeys: locks.map((k) => k.lock),
    channels: locks.map((k) => k.channel),
  }
}

const decode = (reply: ReplyOf<typeof multiAcquire>, withFacts: boolean): NodeGrant => grantOf(reply, '', withFacts ? 2 : undefined)

/**
 * Several mutexes taken at once, all or nothing, in one script per node (their keys must be on
 * one node: one Redis, a quorum of independent nodes, or one cluster slot). The locks are the
 * mutexes' own keys, so a single-resource `acquire` of one of them queues and waits as usual; the
 * lease has one fence for all of them, stored as each resource's last fence.
 */
export class MultiPrimitive extends KeyedPrimitive<Keys> implements Primitive<LockInfo[], LockInfo[]> {
  readonly kind = 'multi'

  constructor(options: MultiOptions) {
    super(options, keysWithLists)
  }

  acquire(exec: Exec, name: string, { token, ttl, waiter, score = '', maxTtl }: AttemptRequest, into: Into<NodeGrant>): void {
    const args = [token, ttl, this.retention, waiter, this.grace, score, maxTtl ?? '', this.holder] as const
    exec(multiAcquire, this.keysOf(name).four, args, (reply) => decode(reply, maxTtl !== undefined), into)
  }

  confirm(exec: Exec, name: string, token: string, fence: number, waiter: string, into: Into<boolean>): void {
    exec(multiConfirm, this.keysOf(name).four, [token, fence, this.retention, waiter], isOne, into)
  }

  async extend(exec: Exec, name: string, token: string, ttl: number): Promise<boolean> {
    return toNumber(await multiExtend.run(exec, this.keysOf(name).lockKeys, [token, ttl])) === 1
  }

  async extendMany(exec: Exec, leases: readonly ExtendItem[]): Promise<boolean[]> {
    const locks: string[] = []
    const args: Arg[] = []
    for (const { resource, token, ttl } of leases) {
      const keys = this.keysOf(resource).lockKeys
      locks.push(...keys)
      args.push(keys.length, token, ttl)
    }
    return decodeMany('multi-extend-many', await multiExtendMany.run(exec, locks, args), leases.length)
  }

  /** Every lock of an all-or-nothing lease shares one cluster slot (or it is not atomic). */
  routeKey(name: string): string {
    return this.keysOf(name).lockKeys[0]!
  }

  release(exec: Exec, name: string, token: string, into: Into<Released>): void {
    const k = this.keysOf(name)
    exec(multiRelease, k.three, [token, this.grace, ...k.channels], decodeRelease, into)
  }

  async leave(exec: Exec, name: string, waiter: string): Promise<void> {
    const k = this.keysOf(name)
    await multiLeave.run(exec, k.three, [waiter, this.grace, ...k.channels])
  }

  inspect(exec: Exec, name: string): Promise<LockInfo[]> {
    return Promise.all(multiResources(name).map(async (r, i) => mergeLock(r, [await inspectLock(exec, this.keysOf(name).locks[i]!)], 1)))
  }

  merge(_name: string, views: readonly LockInfo[][]): LockInfo[] {
    return views[0] ?? []
  }
}
