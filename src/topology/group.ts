import type { Exec } from '../lua/binding.js'
import { clusterSlot } from '../util/keys.js'
import { promised, type Into } from '../util/into.js'
import { replacingCalls, type AttemptRequest, type ConfirmItem, type LeaveItem, type NodeGrant, type Primitive, type Released } from './primitive.js'

// Group commit: the queue of the calls of one turn of the event loop, sent together (`Batcher`),
// and a primitive with its calls grouped on it (`groupCommit`, at the end).

/**
 * Most entries in one batch call: enough that 50 or 100 concurrent workers share a call, few
 * enough that one call keeps Redis busy well under a millisecond (each entry is a whole attempt).
 */
export const GROUP_CHUNK = 128

/**
 * A batch this full goes out at once, before its turn ends, while fewer than `EAGER_IN_FLIGHT`
 * batch calls of its batcher are unanswered. Without it, 50 workers move in lock-step (one call of 50 in
 * flight, the client idle while Redis runs it, then Redis idle while the client reads the answers);
 * sent in eights, Redis runs the first eight while the client still reads the rest. With more calls
 * unanswered, Redis is busy anyway, and the rest of the turn goes as one call per `GROUP_CHUNK`,
 * which costs fewer calls (measured: docs/evidence/safety.md section 8).
 */
export const EAGER_BATCH = 8
export const EAGER_IN_FLIGHT = 2

/** How a `Batcher` flushes: `eager` (the default) sends a batch of `EAGER_BATCH` before its turn ends. */
export interface BatchOptions {
  /**
   * false: every batch waits for the end of its turn. A quorum's client, which runs each operation
   * on every node, is busier than any of its nodes: an eager send there only costs more socket
   * writes, each of which wakes a node (measured: docs/evidence/safety.md section 8).
   */
  readonly eager?: boolean
}

interface Pending<Item, Answer> {
  readonly item: Item
  readonly into: Into<Answer>
}

/** How a `Batcher` sends: one item alone, several in one call, and which items may share a call. */
export interface BatchCalls<Item, Answer> {
  /** Sends `item` alone; its answer (or failure) goes to `into`. */
  one(item: Item, into: Into<Answer>): void
  /** One answer per item, in order: its answer, or the error that item alone failed with. */
  many(items: readonly Item[]): Promise<readonly (Answer | Error)[]>
  /** Items with equal keys may share a `many` call (a Redis Cluster slot); absent: all may. */
  key?(item: Item): number
}

/**
 * Group commit, as databases commit many transactions in one log write: the calls made in one turn
 * of the event loop go out together, one `many` call per key, once that turn's calls are all in.
 * No timer: the first call of a turn queues the flush as a microtask, which runs once the
 * callers of that turn have run (measured against setImmediate: see docs/evidence/safety.md). A call alone
 * in its turn (or in its key) goes as `one`, the single script, as without grouping. Each item
 * still gets its own answer; a failure of a `many` call is each of its items' failure.
 */
export class Batcher<Item, Answer> {
  readonly #calls: BatchCalls<Item, Answer>
  #queue: Pending<Item, Answer>[] = []
  #scheduled = false
  /** Batch (`many`) calls sent and not yet answered. */
  #inFlight = 0
  readonly #eagerBatch: number

  constructor(calls: BatchCalls<Item, Answer>, options: BatchOptions = {}) {
    this.#calls = calls
    this.#eagerBatch = options.eager === false ? Infinity : EAGER_BATCH
  }

  /** Queues `item`; its answer (or its failure) goes to `into`, no promise made for it. */
  submit(item: Item, into: Into<Answer>): void {
    this.#queue.push({ item, into })
    if (this.#queue.length >= this.#eagerBatch && this.#inFlight < EAGER_IN_FLIGHT) this.#send()
    else if (!this.#scheduled) {
      this.#scheduled = true
      // queueMicrotask, not a reaction on a settled promise: that one makes a promise per flush
      // (two per sequential acquire+release, counted by bench A), this one an AsyncResource.
      queueMicrotask(this.#flush)
    }
  }

  readonly #flush = (): void => {
    this.#scheduled = false
    this.#send()
  }

  /** Sends what is queued (nothing when an eager send already took this turn's calls). */
  #send(): void {
    const queue = this.#queue
    if (queue.length === 0) return
    if (queue.length === 1) {
      // Alone in its turn (every sequential call): the queue is emptied and kept, not replaced.
      const only = queue[0]!
      queue.length = 0
      return this.#one(only)
    }
    this.#queue = []
    const key = this.#calls.key
    if (!key) return this.#chunks(queue)
    const groups = new Map<number, Pending<Item, Answer>[]>()
    for (const pending of queue) {
      const k = key(pending.item)
      const group = groups.get(k)
      if (group) group.push(pending)
      else groups.set(k, [pending])
    }
    for (const group of groups.values()) this.#chunks(group)
  }

  #chunks(group: Pending<Item, Answer>[]): void {
    if (group.length === 1) return this.#one(group[0]!)
    for (let i = 0; i < group.length; i += GROUP_CHUNK) this.#many(group.slice(i, i + GROUP_CHUNK))
  }

  #one(pending: Pending<Item, Answer>): void {
    try {
      this.#calls.one(pending.item, pending.into)
    } catch (err) {
      pending.into.error(err)
    }
  }

  #many(chunk: Pending<Item, Answer>[]): void {
    let sent: Promise<readonly (Answer | Error)[]>
    try {
      sent = this.#calls.many(chunk.map((p) => p.item))
    } catch (err) {
      sent = Promise.reject(err)
    }
    this.#inFlight++
    sent.then(
      (answers) => {
        this.#inFlight--
        for (let i = 0; i < chunk.length; i++) {
          const answer = answers[i]
          if (answer instanceof Error) chunk[i]!.into.error(answer)
          else chunk[i]!.into.value(answer as Answer)
        }
      },
      (err: unknown) => {
        this.#inFlight--
        for (const pending of chunk) pending.into.error(err)
      },
    )
  }
}

interface AcquireCall {
  readonly resource: string
  readonly request: AttemptRequest
}

interface ReleaseCall {
  readonly resource: string
  readonly token: string
}

/** A node's `Batcher` (per `Exec`), made the first time that node is asked. */
type PerNode<Item, Answer> = (exec: Exec) => Batcher<Item, Answer>

/** One `Batcher` per node (per `Exec`), made the first time that node is asked. */
function perNode<Item, Answer>(make: (exec: Exec) => BatchCalls<Item, Answer>, options?: BatchOptions): PerNode<Item, Answer> {
  const batchers = new Map<Exec, Batcher<Item, Answer>>()
  return (exec) => {
    let batcher = batchers.get(exec)
    if (!batcher) batchers.set(exec, (batcher = new Batcher(make(exec), options)))
    return batcher
  }
}

/** On a Redis Cluster, the batch key of a call: its resource's slot (absent on one node: all may share). */
const slotKey = (routeKey: (resource: string) => string, cluster: boolean): { key?: (call: { readonly resource: string }) => number } =>
  cluster ? { key: (call) => clusterSlot(routeKey(call.resource)) } : {}

const ignore = (): void => {}

/**
 * `primitive`'s calls grouped, as databases commit many transactions in one log write: the
 * acquisitions (releases, confirmations, departures) made in one turn of the event loop for one
 * node (one `Exec`) share one acquire-many (release-many, ...) script call, per Redis Cluster slot
 * on a cluster, where the primitive has that batch script and `routeKey`; a call alone in its turn
 * goes as the single script (see `Batcher` above). Each call still gets its own answer, decided by the
 * same Lua function as alone. A call the primitive has no batch script for goes as its own.
 */
export class GroupCommit<NodeInfo, Info> {
  readonly #primitive: Primitive<NodeInfo, Info>
  readonly #acquirer: PerNode<AcquireCall, NodeGrant> | undefined
  readonly #releaser: PerNode<ReleaseCall, Released> | undefined
  readonly #confirmer: PerNode<ConfirmItem, boolean> | undefined
  readonly #leaver: PerNode<LeaveItem, unknown> | undefined

  constructor(primitive: Primitive<NodeInfo, Info>, cluster: boolean, options?: BatchOptions) {
    this.#primitive = primitive
    const { acquireMany, releaseMany, confirmMany, leaveMany } = primitive
    const grouped = primitive.routeKey !== undefined
    const key = slotKey((resource) => primitive.routeKey!(resource), cluster)
    this.#acquirer =
      grouped && acquireMany
        ? perNode<AcquireCall, NodeGrant>(
            (exec) => ({
              one: (call, into) => primitive.acquire(exec, call.resource, call.request, into),
              many: (calls) => acquireMany.call(primitive, exec, calls),
              ...key,
            }),
            options,
          )
        : undefined
    this.#releaser =
      grouped && releaseMany
        ? perNode<ReleaseCall, Released>(
            (exec) => ({
              one: (call, into) => primitive.release(exec, call.resource, call.token, into),
              many: (calls) => releaseMany.call(primitive, exec, calls),
              ...key,
            }),
            options,
          )
        : undefined
    this.#confirmer =
      grouped && confirmMany
        ? perNode<ConfirmItem, boolean>(
            (exec) => ({
              one: (c, into) => primitive.confirm(exec, c.resource, c.token, c.fence, c.waiter, into),
              many: (items) => confirmMany.call(primitive, exec, items),
              ...key,
            }),
            options,
          )
        : undefined
    this.#leaver =
      grouped && leaveMany
        ? perNode<LeaveItem, unknown>(
            (exec) => ({
              one: (l, into) => void primitive.leave(exec, l.resource, l.waiter).then(into.value, into.error),
              many: (items) => leaveMany.call(primitive, exec, items),
              ...key,
            }),
            options,
          )
        : undefined
  }

  acquireGrouped(exec: Exec, resource: string, request: AttemptRequest, into: Into<NodeGrant>): void {
    if (this.#acquirer) this.#acquirer(exec).submit({ resource, request }, into)
    else this.#primitive.acquire(exec, resource, request, into)
  }

  releaseGrouped(exec: Exec, resource: string, token: string, into: Into<Released>): void {
    if (this.#releaser) this.#releaser(exec).submit({ resource, token }, into)
    else this.#primitive.release(exec, resource, token, into)
  }

  confirm(exec: Exec, resource: string, token: string, fence: number, waiter: string, into: Into<boolean>): void {
    if (this.#confirmer) this.#confirmer(exec).submit({ resource, token, fence, waiter }, into)
    else this.#primitive.confirm(exec, resource, token, fence, waiter, into)
  }

  leave(exec: Exec, resource: string, waiter: string): Promise<void> {
    const leaver = this.#leaver
    if (!leaver) return this.#primitive.leave(exec, resource, waiter)
    return promised((into) => leaver(exec).submit({ resource, waiter }, into)).then(ignore)
  }
}

/** `primitive` with its calls grouped (`GroupCommit`), as a primitive (what a quorum's nodes run). */
export function groupCommit<NodeInfo, Info>(primitive: Primitive<NodeInfo, Info>, cluster: boolean, options?: BatchOptions): Primitive<NodeInfo, Info> {
  if (!primitive.routeKey) return primitive
  const group = new GroupCommit(primitive, cluster, options)
  return replacingCalls(primitive, {
    acquire: (exec, resource, request, into) => group.acquireGrouped(exec, resource, request, into),
    release: (exec, resource, token, into) => group.releaseGrouped(exec, resource, token, into),
    confirm: (exec, resource, token, fence, waiter, into) => group.confirm(exec, resource, token, fence, waiter, into),
    leave: (exec, resource, waiter) => group.leave(exec, resource, waiter),
  })
}
