import type { LockInfo } from '../../topology/backend.js'
import { KeyedPrimitive } from '../keyed.js'
import {
  mutexAcquire,
  mutexAcquireMany,
  mutexConfirm,
  mutexConfirmMany,
  mutexExtend,
  mutexExtendMany,
  mutexLeave,
  mutexLeaveMany,
  mutexRelease,
  mutexReleaseMany,
  mutexUndo,
} from '../../lua/embedded.js'
import type { Arg, Exec, Reply } from '../../lua/binding.js'
import type { Into } from '../../util/into.js'
import type { AttemptRequest, ConfirmItem, ExtendItem, LeaveItem, NodeGrant, Primitive, Released, UndoPlace } from '../../topology/primitive.js'
import { decodeEntries, decodeMany, decodeRelease, isOne, toNumber, grantOf } from '../decode.js'
import { inspectLock, mergeLock, mutexKeys, type LockView, type MutexKeys } from '../lock.js'

export { mutexKeys, type MutexKeys } from '../lock.js'

export interface MutexOptions {
  prefix: string
  /** How long the fence key outlives its last use (ms). */
  fenceRetention: number
  /** How long past its next re-check a queued waiter keeps its place (ms). */
  waiterGrace: number
  /** The label each lease records beside its token (see `HolderInfo`): `createLocks`' `holder`. */
  holder: string
}

/** A mutex's keys, with the lists its scripts take built once per resource (not per call). */
interface Keys extends MutexKeys {
  readonly all: readonly [lock: string, fence: string, queue: string, queueExpiry: string]
  readonly line: readonly [lock: string, queue: string, queueExpiry: string]
  readonly channels: readonly [string]
}

// Named fields, not `{ ...k }`: V8 copies a spread through a slow generic path, measured at ~4 µs
// per new resource against ~0.5 µs (a cycle on a fresh key pays it once).
function keysWithLists(prefix: string, resource: string): Keys {
  const { lock, fence, queue, queueExpiry, channel } = mutexKeys(prefix, resource)
  return { lock, fence, queue, queueExpiry, channel, all: [lock, fence, queue, queueExpiry], line: [lock, queue, queueExpiry], channels: [channel] }
}

/** A mutex-acquire reply as a grant; the node's facts when they were asked for (`maxTtl`). */
const decodeGrant = (reply: readonly (Reply | undefined)[], maxTtl: number | undefined): NodeGrant => grantOf(reply, '', maxTtl === undefined ? undefined : 2)

/**
 * A fair mutex: one script call per acquire, extend and release on each node, or one for many
 * (acquireMany, releaseMany, extendMany, confirmMany, leaveMany), whose entries the single scripts' Lua decides.
 */
export class MutexPrimitive extends KeyedPrimitive<Keys> implements Primitive<LockView, LockInfo> {
  readonly kind = 'mutex'
  readonly merge = mergeLock
  private readonly waiterGrace: number

  constructor(options: MutexOptions) {
    super(options, keysWithLists)
    this.waiterGrace = options.waiterGrace
  }

  routeKey(resource: string): string {
    return this.keysOf(resource).lock
  }

  acquire(exec: Exec, resource: string, request: AttemptRequest, into: Into<NodeGrant>): void {
    const { token, ttl, waiter, score = '', maxTtl } = request
    const args = [token, ttl, this.retention, waiter, this.grace, score, maxTtl ?? '', this.holder] as const
    exec(mutexAcquire, this.keysOf(resource).all, args, (reply) => decodeGrant(reply, maxTtl), into)
  }

  async acquireMany(exec: Exec, attempts: readonly { readonly resource: string; readonly request: AttemptRequest }[]): Promise<(NodeGrant | Error)[]> {
    const keys: string[] = []
    const args: [retention: Arg, grace: Arg, holder: Arg, ...requests: Arg[]] = [this.retention, this.grace, this.holder]
    for (const { resource, request } of attempts) {
      keys.push(...this.keysOf(resource).all)
      args.push(request.token, request.ttl, request.waiter, request.score ?? '', request.maxTtl ?? '')
    }
    const reply = await mutexAcquireMany.run(exec, keys, args)
    return decodeEntries('mutex-acquire-many', reply, attempts.length, (entry: Reply[], i) => decodeGrant(entry, attempts[i]!.request.maxTtl))
  }

  confirm(exec: Exec, resource: string, token: string, fence: number, waiter: string, into: Into<boolean>): void {
    exec(mutexConfirm, this.keysOf(resource).all, [token, fence, this.retention, waiter], isOne, into)
  }

  async confirmMany(exec: Exec, leases: readonly ConfirmItem[]): Promise<(boolean | Error)[]> {
    const keys: string[] = []
    const args: [retention: Arg, ...confirms: Arg[]] = [this.retention]
    for (const { resource, token, fence, waiter } of leases) {
      keys.push(...this.keysOf(resource).all)
      args.push(token, fence, waiter)
    }
    return decodeEntries('mutex-confirm-many', await mutexConfirmMany.run(exec, keys, args), leases.length, isOne)
  }

  async extend(exec: Exec, resource: string, token: string, ttl: number): Promise<boolean> {
    return toNumber(await mutexExtend.run(exec, [this.keysOf(resource).lock], [token, ttl])) === 1
  }

  async extendMany(exec: Exec, leases: readonly ExtendItem[]): Promise<boolean[]> {
    const locks: string[] = []
    const args: Arg[] = []
    for (const { resource, token, ttl } of leases) {
      locks.push(this.keysOf(resource).lock)
      args.push(token, ttl)
    }
    return decodeMany('mutex-extend-many', await mutexExtendMany.run(exec, locks, args), leases.length)
  }

  release(exec: Exec, resource: string, token: string, into: Into<Released>): void {
    const k = this.keysOf(resource)
    exec(mutexRelease, k.line, [token, k.channel, this.grace], decodeRelease, into)
  }

  async releaseMany(exec: Exec, leases: readonly { readonly resource: string; readonly token: string }[]): Promise<(Released | Error)[]> {
    const keys: string[] = []
    const args: [grace: Arg, ...releases: Arg[]] = [this.grace]
    for (const { resource, token } of leases) {
      const k = this.keysOf(resource)
      keys.push(...k.line)
      args.push(token, k.channel)
    }
    return decodeEntries('mutex-release-many', await mutexReleaseMany.run(exec, keys, args), leases.length, decodeRelease)
  }

  async leave(exec: Exec, resource: string, waiter: string): Promise<void> {
    const k = this.keysOf(resource)
    await mutexLeave.run(exec, k.line, [waiter, k.channel, this.grace])
  }

  async undo(exec: Exec, resource: string, token: string, { waiter, score, ttl }: UndoPlace): Promise<void> {
    const k = this.keysOf(resource)
    await mutexUndo.run(exec, k.line, [token, waiter, score, ttl + this.waiterGrace, k.channel, this.grace])
  }

  async leaveMany(exec: Exec, waiters: readonly LeaveItem[]): Promise<(boolean | Error)[]> {
    const keys: string[] = []
    const args: [grace: Arg, ...leaves: Arg[]] = [this.grace]
    for (const { resource, waiter } of waiters) {
      const k = this.keysOf(resource)
      keys.push(...k.line)
      args.push(waiter, k.channel)
    }
    return decodeEntries('mutex-leave-many', await mutexLeaveMany.run(exec, keys, args), waiters.length, isOne)
  }

  inspect(exec: Exec, resource: string): Promise<LockView> {
    return inspectLock(exec, this.keysOf(resource))
  }
}
