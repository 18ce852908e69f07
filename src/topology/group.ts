import type { Exec } from '../lua/binding.js'
import type { Into } from '../util/alarms.js'
import { clusterSlot } from '../util/keys.js'
import type { AttemptRequest, ConfirmItem, LeaveItem, NodeGrant, Primitive, Released } from './primitive.js'

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
 * which costs fewer calls (measured: docs/safety.md section 8).
 */
export const EAGER_BATCH = 8
export const EAGER_IN_FLIGHT = 2

/** How a `Batcher` flushes: `eager` (the default) sends a batch of `EAGER_BATCH` before its turn ends. */
export interface BatchOptions {
  /**
   * false: every batch waits for the end of its turn. A quorum's client, which runs each operation
   * on every node, is busier than any of its nodes: an eager send there only costs more socket
   * writes, each of which wakes a node (measured: docs/safety.md section 8).
   */
  readonly eager?: boolean
}

interface Pending<Item, Answer> {
  readonly item: Item
  resolve(answer: Answer): void
  reject(err: unknown): void
}

/** How a `Batcher` sends: one item alone, several in one call, and which items may share a call. */
export interface BatchCalls<Item, Answer> {
  one(item: Item): Promise<Answer>
  /** `one` with the answer handed to `resolve` (a failure to `reject`), no promise made for it; absent: `one`. */
  oneInto?(item: Item, resolve: (answer: Answer) => void, reject: (err: unknown) => void): void
  /** One answer per item, in order: its answer, or the error that item alone failed with. */
  many(items: readonly Item[]): Promise<readonly (Answer | Error)[]>
  /** Items with equal keys may share a `many` call (a Redis Cluster slot); absent: all may. */
  key?(item: Item): number
}

/**
 * Group commit, as databases commit many transactions in one log write: the calls made in one turn
 * of the event loop go out together, one `many` call per key, once that turn's calls are all in.
 * No timer: the first call of a turn queues the flush as a microtask, which runs once the
 * callers of that turn have run (measured against setImmediate: see docs/safety.md). A call alone
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

  /** `item`'s answer, or what `finish` makes of it (read in the handler that settles it: no promise more). */
  run(item: Item): Promise<Answer>
  run<R>(item: Item, finish: (answer: Answer) => R): Promise<R>
  run<R>(item: Item, finish?: (answer: Answer) => R): Promise<R | Answer> {
    return new Promise<R | Answer>((resolve, reject) => {
      if (!finish) return this.push(item, resolve, reject)
      this.push(
        item,
        (answer) => {
          try {
            resolve(finish(answer))
          } catch (err) {
            reject(err)
          }
        },
        reject,
      )
    })
  }

  /** Queues `item`; its answer goes to `resolve` (or its failure to `reject`), no promise made for it. */
  push(item: Item, resolve: (answer: Answer) => void, reject: (err: unknown) => void): void {
    this.#queue.push({ item, resolve, reject })
    if (this.#queue.length >= this.#eagerBatch && this.#inFlight < EAGER_IN_FLIGHT) this.#send()
    else if (!this.#scheduled) {
      this.#scheduled = true
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
    this.#queue = []
    if (queue.length === 1) return this.#one(queue[0]!)
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
    const oneInto = this.#calls.oneInto
    if (oneInto) {
      try {
        oneInto(pending.item, pending.resolve, pending.reject)
      } catch (err) {
        pending.reject(err)
      }
      return
    }
    let sent: Promise<Answer>
    try {
      sent = this.#calls.one(pending.item)
    } catch (err) {
      return pending.reject(err)
    }
    sent.then(pending.resolve, pending.reject)
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
          if (answer instanceof Error) chunk[i]!.reject(answer)
          else chunk[i]!.resolve(answer as Answer)
        }
      },
      (err: unknown) => {
        this.#inFlight--
        for (const pending of chunk) pending.reject(err)
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

/**
 * A primitive's acquisitions and releases, each answer read by the caller's `finish` where it
 * settles: grouped per node (per `Exec`) and, on a Redis Cluster, per slot where the primitive has
 * `acquireMany`/`releaseMany`/`routeKey` (the calls of one turn for one node share one acquire-many
 * or release-many script call), one script call each otherwise.
 */
export interface GroupedCalls {
  acquire<R>(exec: Exec, resource: string, request: AttemptRequest, finish: (grant: NodeGrant) => R): Promise<R>
  release<R>(exec: Exec, resource: string, token: string, finish: (released: Released) => R): Promise<R>
  /** `acquire` with the outcome handed to `into` (no promise made for it: the hot path). */
  acquireInto<R>(exec: Exec, resource: string, request: AttemptRequest, finish: (grant: NodeGrant) => R, into: Into<R>): void
  /** `release` with the outcome handed to `into`. */
  releaseInto<R>(exec: Exec, resource: string, token: string, finish: (released: Released) => R, into: Into<R>): void
}

/** `finish(answer)` to `into.value`, or what `finish` threw to `into.error`. */
const finishing =
  <A, R>(finish: (answer: A) => R, into: Into<R>) =>
  (answer: A): void => {
    let result: R
    try {
      result = finish(answer)
    } catch (err) {
      return into.error(err)
    }
    into.value(result)
  }

/** One `Batcher` per node (per `Exec`), made the first time that node is asked. */
function perNode<Item, Answer>(make: (exec: Exec) => BatchCalls<Item, Answer>, options?: BatchOptions): (exec: Exec) => Batcher<Item, Answer> {
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

export function groupedCalls<NodeInfo, Info>(primitive: Primitive<NodeInfo, Info>, cluster: boolean, options?: BatchOptions): GroupedCalls {
  const { acquireMany, releaseMany, acquireInto, releaseInto, routeKey } = primitive
  const key = routeKey ? slotKey(routeKey, cluster) : {}
  const acquirer =
    routeKey && acquireMany
      ? perNode<AcquireCall, NodeGrant>(
          (exec) => ({
            one: (call) => primitive.acquire(exec, call.resource, call.request),
            ...(exec.into && acquireInto
              ? { oneInto: (call, resolve, reject) => acquireInto.call(primitive, exec.into!, call.resource, call.request, resolve, reject) }
              : {}),
            many: (calls) => acquireMany.call(primitive, exec, calls),
            ...key,
          }),
          options,
        )
      : undefined
  const releaser =
    routeKey && releaseMany
      ? perNode<ReleaseCall, Released>(
          (exec) => ({
            one: (call) => primitive.release(exec, call.resource, call.token),
            ...(exec.into && releaseInto
              ? { oneInto: (call, resolve, reject) => releaseInto.call(primitive, exec.into!, call.resource, call.token, resolve, reject) }
              : {}),
            many: (calls) => releaseMany.call(primitive, exec, calls),
            ...key,
          }),
          options,
        )
      : undefined
  return {
    acquire: acquirer
      ? (exec, resource, request, finish) => acquirer(exec).run({ resource, request }, finish)
      : (exec, resource, request, finish) => primitive.acquire(exec, resource, request).then(finish),
    release: releaser
      ? (exec, resource, token, finish) => releaser(exec).run({ resource, token }, finish)
      : (exec, resource, token, finish) => primitive.release(exec, resource, token).then(finish),
    acquireInto: acquirer
      ? (exec, resource, request, finish, into) => acquirer(exec).push({ resource, request }, finishing(finish, into), into.error)
      : (exec, resource, request, finish, into) => void primitive.acquire(exec, resource, request).then(finishing(finish, into), into.error),
    releaseInto: releaser
      ? (exec, resource, token, finish, into) => releaser(exec).push({ resource, token }, finishing(finish, into), into.error)
      : (exec, resource, token, finish, into) => void primitive.release(exec, resource, token).then(finishing(finish, into), into.error),
  }
}

const same = <T>(value: T): T => value

/** A primitive with its calls grouped (see `groupCommit`), and its hot calls without a promise. */
export interface GroupCommit<NodeInfo, Info> {
  /** The primitive, each of its calls grouped where it has a batch script. */
  readonly primitive: Primitive<NodeInfo, Info>
  /** `primitive.acquire` with the outcome handed to `into` (no promise made for it: a quorum's hot path). */
  acquireInto(exec: Exec, resource: string, request: AttemptRequest, into: Into<NodeGrant>): void
  /** `primitive.release` with the outcome handed to `into`. */
  releaseInto(exec: Exec, resource: string, token: string, into: Into<Released>): void
  /** `primitive.confirm` with the outcome handed to `into`. */
  confirmInto(exec: Exec, resource: string, token: string, fence: number, waiter: string, into: Into<boolean>): void
}

/**
 * `primitive` with its acquisitions, releases, confirmations and departures grouped as
 * `groupedCalls` groups the first two (a quorum's calls to one node in one turn share one script
 * call of each). A primitive without `routeKey` or any batch script keeps its own calls.
 */
export function groupCommit<NodeInfo, Info>(primitive: Primitive<NodeInfo, Info>, cluster: boolean, options?: BatchOptions): GroupCommit<NodeInfo, Info> {
  const { acquireMany, releaseMany, confirmMany, leaveMany, routeKey } = primitive
  const calls = groupedCalls(primitive, cluster, options)
  const ungrouped = !routeKey || (!acquireMany && !releaseMany && !confirmMany && !leaveMany)
  const key = routeKey ? slotKey(routeKey, cluster) : {}
  const confirmer =
    confirmMany && !ungrouped
      ? perNode<ConfirmItem, boolean>(
          (exec) => ({
            one: (c) => primitive.confirm(exec, c.resource, c.token, c.fence, c.waiter),
            many: (items) => confirmMany.call(primitive, exec, items),
            ...key,
          }),
          options,
        )
      : undefined
  const leaver =
    leaveMany && !ungrouped
      ? perNode<LeaveItem, unknown>(
          (exec) => ({
            one: (l) => primitive.leave(exec, l.resource, l.waiter),
            many: (items) => leaveMany.call(primitive, exec, items),
            ...key,
          }),
          options,
        )
      : undefined
  return {
    primitive: ungrouped
      ? primitive
      : {
          ...primitive,
          ...(acquireMany ? { acquire: (exec, resource, request) => calls.acquire(exec, resource, request, same) } : {}),
          ...(releaseMany ? { release: (exec, resource, token) => calls.release(exec, resource, token, same) } : {}),
          ...(confirmer ? { confirm: (exec, resource, token, fence, waiter) => confirmer(exec).run({ resource, token, fence, waiter }) } : {}),
          ...(leaver ? { leave: (exec, resource, waiter) => leaver(exec).run({ resource, waiter }, ignore) } : {}),
        },
    acquireInto: (exec, resource, request, into) => calls.acquireInto(exec, resource, request, same, into),
    releaseInto: (exec, resource, token, into) => calls.releaseInto(exec, resource, token, same, into),
    confirmInto: confirmer
      ? (exec, resource, token, fence, waiter, into) => confirmer(exec).push({ resource, token, fence, waiter }, into.value, into.error)
      : (exec, resource, token, fence, waiter, into) => void primitive.confirm(exec, resource, token, fence, waiter).then(into.value, into.error),
  }
}

const ignore = (): void => {}
