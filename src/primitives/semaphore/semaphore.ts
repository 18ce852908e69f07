import { InvalidArgumentError } from '../../errors/errors.js'
import { KeyedPrimitive } from '../keyed.js'
import type { Arg, Exec, ReplyOf } from '../../lua/binding.js'
import type { Into } from '../../util/into.js'
import {
  semaphoreAcquire,
  semaphoreConfirm,
  semaphoreExtend,
  semaphoreExtendAll,
  semaphoreExtendMany,
  semaphoreInspect,
  semaphoreLeave,
  semaphoreRelease,
} from '../../lua/embedded.js'
import type { AttemptRequest, ExtendItem, NodeGrant, Primitive, Released } from '../../topology/primitive.js'
import { decodeMany, decodeRelease, isOne, nodeFacts, toNumber, grantOf } from '../decode.js'
import { mergeViews, permitToken, splitToken, type SemaphoreInfo, type SemaphoreView } from './permits.js'

export type { PermitHolder, SemaphoreInfo } from './permits.js'

export interface SemaphoreOptions {
  prefix: string
  /** How long the fence key outlives its last use (ms). */
  fenceRetention: number
  /** How long past its next re-check a queued waiter keeps its place (ms). */
  waiterGrace: number
  /** The label each lease records beside its token (see `HolderInfo`): `createLocks`' `holder`. */
  holder: string
  /** Permits that may be held at once. */
  limit: number
  /** Permits each lease of this primitive takes at once (all or none): 1 to limit. Default: 1. */
  permits?: number
  /** False: a free permit goes to whoever asks first (see MAX_PASSES). Default: true (FIFO). */
  fair?: boolean
}

/**
 * With `fair: false`, how many grants may pass the waiter first in line before the line goes first
 * again (until that waiter is served): the bound on how long barging can keep a waiter waiting.
 */
export const MAX_PASSES = 8

/**
 * Keys of one semaphore: the hash tag `{name}` (one cluster slot), then the kind's own part `S:`,
 * so a semaphore and a mutex of the same name never share a key. Each permit is a slot key of its
 * own that expires by the Redis server's clock (PX), never by a client's.
 */
export interface SemaphoreKeys {
  readonly fence: string
  readonly queue: string
  readonly queueExpiry: string
  readonly limit: string
  /** `fair: false`: grants that passed the waiter first in line (semaphore-acquire.lua). */
  readonly passes: string
  readonly channel: string
  readonly slots: readonly string[]
}

export function semaphoreKeys(prefix: string, name: string, limit: number): SemaphoreKeys {
  const base = `${prefix}{${name}}:S:`
  return {
    fence: `${base}F`,
    queue: `${base}Q`,
    queueExpiry: `${base}X`,
    limit: `${base}N`,
    passes: `${base}P`,
    channel: `${base}W`,
    slots: Array.from({ length: limit }, (_, i) => `${base}${i}`),
  }
}

/** A semaphore's keys, with the lists its scripts take built once per name (not per call). */
interface Keys extends SemaphoreKeys {
  /** fence, queue, queue expiry, limit, then the slots: what inspect takes. */
  readonly all: readonly [fence: string, queue: string, queueExpiry: string, limit: string, ...slots: string[]]
  /** What acquire takes: the same with the passes key before the slots. */
  readonly acquiring: readonly [fence: string, queue: string, queueExpiry: string, limit: string, passes: string, ...slots: string[]]
  readonly releasing: readonly [queue: string, queueExpiry: string, limit: string, ...slots: string[]]
  readonly leaving: readonly [queue: string, queueExpiry: string, ...slots: string[]]
  readonly channels: readonly [string]
}

// Named fields, not `{ ...k }`: V8 copies a spread through a slow generic path (see mutex.ts).
function keysWithLists(prefix: string, name: string, limit: number): Keys {
  const k = semaphoreKeys(prefix, name, limit)
  return {
    fence: k.fence,
    queue: k.queue,
    queueExpiry: k.queueExpiry,
    limit: k.limit,
    passes: k.passes,
    channel: k.channel,
    slots: k.slots,
    all: [k.fence, k.queue, k.queueExpiry, k.limit, ...k.slots],
    acquiring: [k.fence, k.queue, k.queueExpiry, k.limit, k.passes, ...k.slots],
    releasing: [k.queue, k.queueExpiry, k.limit, ...k.slots],
    leaving: [k.queue, k.queueExpiry, ...k.slots],
    channels: [k.channel],
  }
}

/** A lease's base token and slot keys; no keys if its token names no slot of this limit. */
type PermitOf = (name: string, token: string) => { base: string; keys: string[] | undefined; slots: number[] | undefined }

const mismatch = (name: string, stored: unknown, limit: number) =>
  new InvalidArgumentError(
    `Semaphore "${name}" is in use with limit ${String(stored)}; this handle asked for limit ${limit} (every caller of one semaphore must use the same limit while permits are held)`,
  )

/** semaphore-acquire's reply; the node's facts follow the slot when they were asked for. */
function decodeGrant(name: string, limit: number, reply: ReplyOf<typeof semaphoreAcquire>, withFacts: boolean): NodeGrant {
  if (toNumber(reply[0]) !== -1) return grantOf(reply, String(reply[2]), withFacts ? 3 : undefined)
  const refusal = mismatch(name, reply[1], limit)
  return withFacts ? { granted: false, retry: 0, refusal, node: nodeFacts(reply, 3) } : { granted: false, retry: 0, refusal }
}

/** semaphore-extend-many over the leases whose token names a slot; the others hold nothing: false, as `extend` answers, unsent. */
async function extendPermits(exec: Exec, leases: readonly ExtendItem[], keysOf: (name: string) => Keys, permitOf: PermitOf): Promise<boolean[]> {
  const answers = leases.map(() => false)
  const sent: number[] = []
  const keys: string[] = []
  const args: Arg[] = []
  const several: Promise<void>[] = [] // leases of several permits: one semaphore-extend-all each
  for (const [i, { resource, token, ttl }] of leases.entries()) {
    const { base, keys: slots } = permitOf(resource, token)
    if (slots === undefined) continue
    if (slots.length > 1) {
      several.push(semaphoreExtendAll.run(exec, [keysOf(resource).limit, ...slots], [base, ttl]).then((r) => void (answers[i] = toNumber(r) === 1)))
      continue
    }
    sent.push(i)
    keys.push(slots[0]!, keysOf(resource).limit)
    args.push(base, ttl)
  }
  if (sent.length === 0) {
    await Promise.all(several)
    return answers
  }
  const [reply] = await Promise.all([semaphoreExtendMany.run(exec, keys, args), ...several])
  const extended = decodeMany('semaphore-extend-many', reply, sent.length)
  for (const [j, i] of sent.entries()) answers[i] = extended[j]!
  return answers
}

/**
 * A counting semaphore: at most `limit` permits at once, each a slot key that expires alone by the
 * server's clock; one fence counter for all permits; the mutex's FIFO queue and wake-ups (with
 * `fair: false`, a free permit goes to whoever asks first, within MAX_PASSES of the line).
 * On a quorum, each slot is a quorum mutex of its own (a permit is a majority holding the same
 * slot), which is what keeps `limit` exact there (docs/evidence/safety.md).
 */
export class SemaphorePrimitive extends KeyedPrimitive<Keys> implements Primitive<SemaphoreView, SemaphoreInfo> {
  readonly kind = 'semaphore'
  private readonly limit: number
  private readonly permits: number
  private readonly maxPasses: number | ''

  constructor(options: SemaphoreOptions) {
    const { limit } = options
    super(options, (prefix, name) => keysWithLists(prefix, name, limit))
    this.limit = limit
    this.permits = options.permits ?? 1
    this.maxPasses = options.fair === false ? MAX_PASSES : ''
  }

  /** A lease token's base and slots, with the slots' keys (none if a slot is beyond the limit). */
  private permitOf(name: string, token: string): ReturnType<PermitOf> {
    const { base, slots } = splitToken(token)
    const all = this.keysOf(name).slots
    const keys = slots?.every((slot) => slot < this.limit) ? slots.map((slot) => all[slot]!) : undefined
    return { base, keys, slots: keys && slots }
  }

  override leaseToken(token: string, claim: string): string {
    return permitToken(token, claim)
  }

  acquire(exec: Exec, name: string, { token, ttl, waiter, score = '', maxTtl }: AttemptRequest, into: Into<NodeGrant>): void {
    const { limit } = this
    const args = [
      token,
      ttl,
      this.retention,
      waiter,
      this.grace,
      limit,
      this.permits,
      this.maxPasses,
      score,
      maxTtl === undefined ? '' : String(maxTtl),
      this.holder,
    ] as const
    exec(semaphoreAcquire, this.keysOf(name).acquiring, args, (reply) => decodeGrant(name, limit, reply, maxTtl !== undefined), into)
  }

  confirm(exec: Exec, name: string, token: string, fence: number, waiter: string, into: Into<boolean>): void {
    const k = this.keysOf(name)
    const { base, keys } = this.permitOf(name, token)
    if (keys === undefined) return into.value(false)
    const confirmKeys = [k.fence, k.queue, k.queueExpiry, k.passes, keys[0]!, ...keys.slice(1)] as const
    exec(semaphoreConfirm, confirmKeys, [base, fence, this.retention, waiter, this.maxPasses === '' ? '' : '1'], isOne, into)
  }

  async extend(exec: Exec, name: string, token: string, ttl: number): Promise<boolean> {
    const { base, keys } = this.permitOf(name, token)
    if (keys === undefined) return false
    if (keys.length > 1) return toNumber(await semaphoreExtendAll.run(exec, [this.keysOf(name).limit, ...keys], [base, ttl])) === 1
    return toNumber(await semaphoreExtend.run(exec, [keys[0]!, this.keysOf(name).limit], [base, ttl])) === 1
  }

  extendMany(exec: Exec, leases: readonly ExtendItem[]): Promise<boolean[]> {
    return extendPermits(exec, leases, this.keysOf, (name, token) => this.permitOf(name, token))
  }

  routeKey(name: string): string {
    return this.keysOf(name).limit
  }

  release(exec: Exec, name: string, token: string, into: Into<Released>): void {
    const k = this.keysOf(name)
    const { base, slots } = splitToken(token)
    if (slots?.some((slot) => slot >= this.limit)) return into.value({ released: false })
    exec(semaphoreRelease, k.releasing, [base, slots?.join(',') ?? '', k.channel, this.grace], decodeRelease, into)
  }

  async leave(exec: Exec, name: string, waiter: string): Promise<void> {
    const k = this.keysOf(name)
    await semaphoreLeave.run(exec, k.leaving, [waiter, k.channel, this.grace])
  }

  inspect(exec: Exec, name: string): Promise<SemaphoreView> {
    return semaphoreInspect.run(exec, this.keysOf(name).all, [])
  }

  merge(name: string, views: readonly SemaphoreView[], majority: number): SemaphoreInfo {
    return mergeViews(name, this.limit, views, majority)
  }
}
