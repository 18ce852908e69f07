import { KeyedPrimitive } from '../keyed.js'
import type { Arg, Exec, ReplyOf } from '../../lua/binding.js'
import type { Into } from '../../util/into.js'
import { rwAcquire, rwConfirm, rwExtend, rwExtendMany, rwInspect, rwLeave, rwRelease } from '../../lua/embedded.js'
import type { AttemptRequest, ExtendItem, NodeGrant, Primitive, Released } from '../../topology/primitive.js'
import type { HolderInfo } from '../../topology/backend.js'
import { decodeMany, decodeRelease, isOne, mergeHolder, readLockValue, toNumber, grantOf } from '../decode.js'

export interface RwLockOptions {
  prefix: string
  /** How long the fence key outlives its last use (ms). */
  fenceRetention: number
  /** How long past its next re-check a queued waiter keeps its place (ms). */
  waiterGrace: number
  /** The label each lease records beside its token (see `HolderInfo`): `createLocks`' `holder`. */
  holder: string
}

/** One holder of a read/write lock (the writer, or a reader): its token, its remaining ttl, and who holds it since when (see `HolderInfo`). */
export interface ReadWriteHolder extends HolderInfo {
  /** The lease's token. */
  readonly token: string
  /** Its remaining ttl in ms. */
  readonly ttl: number
}

/** What `readWrite(name).inspect()` shows. */
export interface ReadWriteInfo {
  /** The read/write lock's name, as given. */
  readonly name: string
  /** The writer (its token, remaining ttl, holder, since and last extension), or null. */
  readonly writer: ReadWriteHolder | null
  /** Each reader (its token, remaining ttl, holder, since and last extension). */
  readonly readers: readonly ReadWriteHolder[]
  /** The last fence handed out (readers and writers share one counter), or null if none is kept. */
  readonly fence: number | null
  /** Waiters queued in Redis (one per waiting process and kind). */
  readonly waiters: number
}

/**
 * Keys of one read/write lock: the hash tag `{name}`, then the kind's own part `R:`, so it never
 * shares a key with a mutex or a semaphore of the same name.
 */
export function rwKeys(prefix: string, name: string) {
  const base = `${prefix}{${name}}:R:`
  return {
    writer: `${base}L`,
    readers: `${base}D`,
    /** hash, reader token -> " <sinceMs> <extendedMs> <holder>" (see lib/rw.lua) */
    readerInfo: `${base}H`,
    fence: `${base}F`,
    queue: `${base}Q`,
    queueExpiry: `${base}X`,
    channel: `${base}W`,
  } as const
}

/** A read/write lock's keys, with the lists its scripts take built once per name (not per call). */
function keysWithLists(prefix: string, name: string) {
  const k = rwKeys(prefix, name)
  // Named fields, not `{ ...k }`: V8 copies a spread through a slow generic path (see mutex.ts).
  return {
    writer: k.writer,
    readers: k.readers,
    readerInfo: k.readerInfo,
    fence: k.fence,
    queue: k.queue,
    queueExpiry: k.queueExpiry,
    channel: k.channel,
    all: [k.writer, k.readers, k.fence, k.queue, k.queueExpiry] as const,
    acquiring: [k.writer, k.readers, k.fence, k.queue, k.queueExpiry, k.readerInfo] as const,
    holdersQueue: [k.writer, k.readers, k.queue, k.queueExpiry, k.readerInfo] as const,
    holders: [k.writer, k.readers, k.readerInfo] as const,
    channels: [k.channel] as const,
  }
}

type RwView = ReplyOf<typeof rwInspect>
type Keys = ReturnType<typeof keysWithLists>

/**
 * The holders that a majority of nodes record (one node: every one), each with its ttl as how long
 * a majority still has it and its facts merged (see `mergeHolder`).
 */
function countHolders(entries: readonly ReadWriteHolder[], majority: number): ReadWriteHolder[] {
  const by = new Map<string, ReadWriteHolder[]>()
  for (const entry of entries) by.set(entry.token, [...(by.get(entry.token) ?? []), entry])
  return [...by]
    .filter(([, seen]) => seen.length >= majority)
    .map(([token, seen]) => ({ token, ttl: seen.map((s) => s.ttl).sort((a, b) => b - a)[majority - 1]!, ...mergeHolder(seen, majority) }))
}

/** The nodes' views (one per node that answered) as `inspect` shows them. */
function mergeViews(name: string, views: readonly RwView[], majority: number): ReadWriteInfo {
  const writers = countHolders(
    views.flatMap(([w, pttl]) => (typeof w === 'string' ? [{ ...readLockValue(w), ttl: toNumber(pttl) }] : [])),
    majority,
  )
  const readers = countHolders(
    views.flatMap(([, , , , ...rest]) => {
      const out: ReadWriteHolder[] = []
      for (let i = 0; i + 2 < rest.length; i += 3) out.push({ ...readLockValue(rest[i + 2] || ''), token: String(rest[i]), ttl: toNumber(rest[i + 1]) })
      return out
    }),
    majority,
  )
  const fences = views.flatMap(([, , f]) => (f == null ? [] : [Number(f)]))
  return {
    name,
    writer: writers[0] ?? null,
    readers,
    fence: fences.length > 0 ? Math.max(...fences) : null,
    waiters: Math.max(0, ...views.map(([, , , w]) => toNumber(w))),
  }
}

const decode = (reply: ReplyOf<typeof rwAcquire>, withFacts: boolean): NodeGrant => grantOf(reply, '', withFacts ? 2 : undefined)

/**
 * One side of a read/write lock: `mode` 'r' (many readers at once) or 'w' (one writer, no
 * readers). Both sides share the keys, the fair queue (a waiting writer keeps new readers out) and
 * one fence counter, so a writer's fence is larger than every earlier reader's or writer's. A
 * release that frees the lock wakes a writer, or every reader at the head of the line at once.
 */
export class RwLockPrimitive extends KeyedPrimitive<Keys> implements Primitive<RwView, ReadWriteInfo> {
  readonly kind: 'rw-read' | 'rw-write'
  private readonly mode: 'r' | 'w'

  constructor(options: RwLockOptions, mode: 'r' | 'w') {
    super(options, keysWithLists)
    this.kind = mode === 'r' ? 'rw-read' : 'rw-write'
    this.mode = mode
  }

  acquire(exec: Exec, name: string, { token, ttl, waiter, score = '', maxTtl }: AttemptRequest, into: Into<NodeGrant>): void {
    const args = [token, ttl, this.retention, waiter, this.grace, this.mode, score, maxTtl ?? '', this.holder] as const
    exec(rwAcquire, this.keysOf(name).acquiring, args, (reply) => decode(reply, maxTtl !== undefined), into)
  }

  confirm(exec: Exec, name: string, token: string, fence: number, waiter: string, into: Into<boolean>): void {
    exec(rwConfirm, this.keysOf(name).all, [token, fence, this.retention, waiter, this.mode], isOne, into)
  }

  async extend(exec: Exec, name: string, token: string, ttl: number): Promise<boolean> {
    return toNumber(await rwExtend.run(exec, this.keysOf(name).holders, [token, ttl, this.mode])) === 1
  }

  async extendMany(exec: Exec, leases: readonly ExtendItem[]): Promise<boolean[]> {
    if (leases.length === 0) return []
    // One side per primitive, so one mode per call (see rw-extend-many.lua).
    const keys: string[] = []
    const args: [mode: Arg, ...tokens: Arg[]] = [this.mode]
    for (const { resource, token, ttl } of leases) {
      const k = this.keysOf(resource)
      keys.push(k.writer, k.readers, k.readerInfo)
      args.push(token, ttl)
    }
    return decodeMany('rw-extend-many', await rwExtendMany.run(exec, keys, args), leases.length)
  }

  routeKey(name: string): string {
    return this.keysOf(name).writer
  }

  release(exec: Exec, name: string, token: string, into: Into<Released>): void {
    const k = this.keysOf(name)
    exec(rwRelease, k.holdersQueue, [token, this.mode, k.channel, this.grace], decodeRelease, into)
  }

  async leave(exec: Exec, name: string, waiter: string): Promise<void> {
    const k = this.keysOf(name)
    await rwLeave.run(exec, k.holdersQueue, [waiter, k.channel, this.grace])
  }

  inspect(exec: Exec, name: string): Promise<RwView> {
    return rwInspect.run(exec, this.keysOf(name).acquiring, [])
  }

  merge(name: string, views: readonly RwView[], majority: number): ReadWriteInfo {
    return mergeViews(name, views, majority)
  }
}
