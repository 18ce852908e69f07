import type { LockInfo } from '../../topology/backend.js'
import { keyCache } from '../../util/keys.js'
import { redlockAcquire, redlockConfirm, redlockExtend, redlockInspect, redlockLeave, redlockRelease } from '../../lua/embedded.js'
import type { NodeGrant, Primitive } from '../../topology/primitive.js'
import { decodeRelease, isOne, toNumber, grantOf } from '../decode.js'
import { mergeLock, type LockView } from '../lock.js'
import { redlockKeys, type RedlockKeys } from './keys.js'

export { besideBase, redlockKeys, type RedlockKeys } from './keys.js'

export interface RedlockOptions {
  /** How long the fence keys outlive their last use (ms). */
  fenceRetention: number
  /** How long past its next re-check a queued waiter keeps its place (ms). */
  waiterGrace: number
  /** The database the fork's `db` setting selects inside each script, or undefined for the client's own. */
  db: number | undefined
  /** How soon a waiter looks again while node-redlock's holder (which publishes nothing) holds the lock (ms). */
  recheck: number
}

/** A lease's resources: one name, or (`several`) a JSON array of names, as the compat layer gives them. */
export const resourcesOf = (name: string, several: boolean): string[] => (several ? (JSON.parse(name) as string[]) : [name])

/** The keys of every resource of one lease, and the lists the scripts take, built once per name. */
interface Keys {
  readonly first: RedlockKeys
  readonly four: readonly string[]
  readonly three: readonly string[]
  readonly locks: readonly string[]
  readonly channels: readonly string[]
}

function keysOfName(several: boolean, name: string): Keys {
  const all = resourcesOf(name, several).map(redlockKeys)
  return {
    first: all[0]!,
    four: all.flatMap((k) => [k.lock, k.fence, k.queue, k.queueExpiry]),
    three: all.flatMap((k) => [k.lock, k.queue, k.queueExpiry]),
    locks: all.map((k) => k.lock),
    channels: all.map((k) => k.channel),
  }
}

const decodeGrant = (reply: readonly unknown[], withFacts: boolean): NodeGrant => grantOf(reply as never, '', withFacts ? 2 : undefined)

/**
 * node-redlock's lock in node-redlock's layout (the resource's name holds the lease's value), with
 * fencelock's fence and, for one resource, its fair queue beside it; `several`: a lease of several
 * resources at once, all or nothing, as node-redlock takes an array (no queue: its waiters re-check).
 */
export function redlock(options: RedlockOptions, several: boolean): Primitive<LockView, LockInfo> {
  const keysOf = keyCache(several ? '[' : '', (_, name) => keysOfName(several, name))
  const retention = String(options.fenceRetention)
  const grace = String(options.waiterGrace)
  const db = options.db === undefined ? '' : String(options.db)
  const recheck = String(options.recheck)
  return {
    kind: several ? 'redlock-all' : 'redlock',
    channel: (name) => keysOf(name).channels,
    leaseToken: (token) => token,
    acquire(exec, name, { token, ttl, waiter, score = '', maxTtl }, into) {
      const args = [token, ttl, retention, several ? '' : waiter, grace, score, maxTtl ?? '', db, recheck] as const
      redlockAcquire.send(exec, keysOf(name).four, args, (reply) => decodeGrant(reply, maxTtl !== undefined), into)
    },
    confirm: (exec, name, token, fence, waiter, into) =>
      redlockConfirm.send(exec, keysOf(name).four, [token, fence, retention, several ? '' : waiter, db], isOne, into),
    async extend(exec, name, token, ttl) {
      return toNumber(await redlockExtend.run(exec, keysOf(name).locks, [token, ttl, db])) === 1
    },
    release(exec, name, token, into) {
      const k = keysOf(name)
      redlockRelease.send(exec, k.three, [token, grace, db, ...k.channels], decodeRelease, into)
    },
    async leave(exec, name, waiter) {
      if (several) return
      const k = keysOf(name).first
      await redlockLeave.run(exec, [k.lock, k.queue, k.queueExpiry], [waiter, k.channel, grace, db])
    },
    inspect(exec, name) {
      const k = keysOf(name).first
      return redlockInspect.run(exec, [k.lock, k.fence, k.queue, k.queueExpiry], [db])
    },
    merge: mergeLock,
  }
}
