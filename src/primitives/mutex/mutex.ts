import type { LockInfo } from '../../topology/backend.js'
import { keyCache } from '../../util/keys.js'
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
import type { Arg, Reply } from '../../lua/binding.js'
import type { AttemptRequest, NodeGrant, Primitive } from '../../topology/primitive.js'
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
export function mutex(options: MutexOptions): Primitive<LockView, LockInfo> {
  const keysOf = keyCache(options.prefix, keysWithLists)
  // As strings once: the client would turn the numbers into strings on every call.
  const retention = String(options.fenceRetention)
  const grace = String(options.waiterGrace)
  const holder = options.holder
  const acquireArgs = ({ token, ttl, waiter, score = '', maxTtl }: AttemptRequest): readonly [Arg, Arg, Arg, Arg, Arg, Arg, Arg, Arg] => [
    token,
    ttl,
    retention,
    waiter,
    grace,
    score,
    maxTtl ?? '',
    holder,
  ]
  return {
    kind: 'mutex',
    channel: (resource) => keysOf(resource).channels,
    leaseToken: (token) => token,
    acquire: (exec, resource, request, into) =>
      mutexAcquire.send(exec, keysOf(resource).all, acquireArgs(request), (reply) => decodeGrant(reply, request.maxTtl), into),
    async acquireMany(exec, attempts) {
      const keys: string[] = []
      const args: [retention: Arg, grace: Arg, holder: Arg, ...requests: Arg[]] = [retention, grace, holder]
      for (const { resource, request } of attempts) {
        keys.push(...keysOf(resource).all)
        args.push(request.token, request.ttl, request.waiter, request.score ?? '', request.maxTtl ?? '')
      }
      const reply = await mutexAcquireMany.run(exec, keys, args)
      return decodeEntries('mutex-acquire-many', reply, attempts.length, (entry: Reply[], i) => decodeGrant(entry, attempts[i]!.request.maxTtl))
    },
    confirm: (exec, resource, token, fence, waiter, into) => mutexConfirm.send(exec, keysOf(resource).all, [token, fence, retention, waiter], isOne, into),
    async confirmMany(exec, leases) {
      const keys: string[] = []
      const args: [retention: Arg, ...confirms: Arg[]] = [retention]
      for (const { resource, token, fence, waiter } of leases) {
        keys.push(...keysOf(resource).all)
        args.push(token, fence, waiter)
      }
      return decodeEntries('mutex-confirm-many', await mutexConfirmMany.run(exec, keys, args), leases.length, isOne)
    },
    async extend(exec, resource, token, ttl) {
      return toNumber(await mutexExtend.run(exec, [keysOf(resource).lock], [token, ttl])) === 1
    },
    async extendMany(exec, leases) {
      const locks: string[] = []
      const args: Arg[] = []
      for (const { resource, token, ttl } of leases) {
        locks.push(keysOf(resource).lock)
        args.push(token, ttl)
      }
      return decodeMany('mutex-extend-many', await mutexExtendMany.run(exec, locks, args), leases.length)
    },
    routeKey: (resource) => keysOf(resource).lock,
    release: (exec, resource, token, into) => {
      const k = keysOf(resource)
      mutexRelease.send(exec, k.line, [token, k.channel, grace], decodeRelease, into)
    },
    async releaseMany(exec, leases) {
      const keys: string[] = []
      const args: [grace: Arg, ...releases: Arg[]] = [grace]
      for (const { resource, token } of leases) {
        const k = keysOf(resource)
        keys.push(...k.line)
        args.push(token, k.channel)
      }
      return decodeEntries('mutex-release-many', await mutexReleaseMany.run(exec, keys, args), leases.length, decodeRelease)
    },
    async leave(exec, resource, waiter) {
      const k = keysOf(resource)
      await mutexLeave.run(exec, k.line, [waiter, k.channel, grace])
    },
    async undo(exec, resource, token, { waiter, score, ttl }) {
      const k = keysOf(resource)
      await mutexUndo.run(exec, k.line, [token, waiter, score, ttl + options.waiterGrace, k.channel, grace])
    },
    async leaveMany(exec, waiters) {
      const keys: string[] = []
      const args: [grace: Arg, ...leaves: Arg[]] = [grace]
      for (const { resource, waiter } of waiters) {
        const k = keysOf(resource)
        keys.push(...k.line)
        args.push(waiter, k.channel)
      }
      return decodeEntries('mutex-leave-many', await mutexLeaveMany.run(exec, keys, args), waiters.length, isOne)
    },
    inspect: (exec, resource) => inspectLock(exec, keysOf(resource)),
    merge: mergeLock,
  }
}
