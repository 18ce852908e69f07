import type { Exec } from '../lua/binding.js'
import { Batcher, type BatchCalls, type BatchOptions } from './batcher.js'
import type { Into } from '../util/alarms.js'
import { clusterSlot } from '../util/keys.js'
import type { AttemptRequest, ConfirmItem, LeaveItem, NodeGrant, Primitive, Released } from './primitive.js'

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
