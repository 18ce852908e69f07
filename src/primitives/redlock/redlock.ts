import type { LockInfo } from '../../topology/backend.js'
import { keyCache } from '../../util/keys.js'
import { redlockAcquire, redlockConfirm, redlockExtend, redlockInspect, redlockLeave, redlockRelease } from '../../lua/embedded.js'
import type { Exec } from '../../lua/binding.js'
import type { Into } from '../../util/into.js'
import type { AttemptRequest, NodeGrant, Primitive, Released } from '../../topology/primitive.js'
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
export class RedlockPrimitive implements Primitive<LockView, LockInfo> {
  readonly kind: 'redlock' | 'redlock-all'
  readonly merge = mergeLock
  private readonly several: boolean
  private readonly keysOf: (name: string) => Keys
  // As strings once: the client would turn the numbers into strings on every call.
  private readonly retention: string
  private readonly grace: string
  private readonly db: string
  private readonly recheck: string

  constructor(options: RedlockOptions, several: boolean) {
    this.kind = several ? 'redlock-all' : 'redlock'
    this.several = several
    this.keysOf = keyCache(several ? '[' : '', (_, name) => keysOfName(several, name))
    this.retention = String(options.fenceRetention)
    this.grace = String(options.waiterGrace)
    this.db = options.db === undefined ? '' : String(options.db)
    this.recheck = String(options.recheck)
  }

  channel(name: string): readonly string[] {
    return this.keysOf(name).channels
  }

  leaseToken(token: string): string {
    return token
  }

  acquire(exec: Exec, name: string, { token, ttl, waiter, score = '', maxTtl }: AttemptRequest, into: Into<NodeGrant>): void {
    const args = [token, ttl, this.retention, this.several ? '' : waiter, this.grace, score, maxTtl ?? '', this.db, this.recheck] as const
    exec(redlockAcquire, this.keysOf(name).four, args, (reply) => decodeGrant(reply, maxTtl !== undefined), into)
  }

  confirm(exec: Exec, name: string, token: string, fence: number, waiter: string, into: Into<boolean>): void {
    exec(redlockConfirm, this.keysOf(name).four, [token, fence, this.retention, this.several ? '' : waiter, this.db], isOne, into)
  }

  async extend(exec: Exec, name: string, token: string, ttl: number): Promise<boolean> {
    return toNumber(await redlockExtend.run(exec, this.keysOf(name).locks, [token, ttl, this.db])) === 1
  }

  release(exec: Exec, name: string, token: string, into: Into<Released>): void {
    const k = this.keysOf(name)
    exec(redlockRelease, k.three, [token, this.grace, this.db, ...k.channels], decodeRelease, into)
  }

  async leave(exec: Exec, name: string, waiter: string): Promise<void> {
    if (this.several) return
    const k = this.keysOf(name).first
    await redlockLeave.run(exec, [k.lock, k.queue, k.queueExpiry], [waiter, k.channel, this.grace, this.db])
  }

  inspect(exec: Exec, name: string): Promise<LockView> {
    const k = this.keysOf(name).first
    return redlockInspect.run(exec, [k.lock, k.fence, k.queue, k.queueExpiry], [this.db])
  }
}
