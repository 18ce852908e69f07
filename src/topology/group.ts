import type { Exec } from '../lua/binding.js'
import { Batcher, type BatchCalls, type BatchOptions } from './batcher.js'
import { clusterSlot } from '../util/keys.js'
import { promised } from '../util/into.js'
import type { AttemptRequest, ConfirmItem, LeaveItem, NodeGrant, Primitive, Released } from './primitive.js'

interface AcquireCall {
  readonly resource: string
  readonly request: AttemptRequest
}

interface ReleaseCall {
  readonly resource: string
  readonly token: string
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

const ignore = (): void => {}

/**
 * `primitive` with its calls grouped, as databases commit many transactions in one log write: the
 * acquisitions (releases, confirmations, departures) made in one turn of the event loop for one
 * node (one `Exec`) share one acquire-many (release-many, ...) script call, per Redis Cluster slot
 * on a cluster, where the primitive has that batch script and `routeKey`; a call alone in its turn
 * goes as the single script (see batcher.ts). Each call still gets its own answer, decided by the
 * same Lua function as alone. A primitive without `routeKey` keeps its own calls.
 */
export function groupCommit<NodeInfo, Info>(primitive: Primitive<NodeInfo, Info>, cluster: boolean, options?: BatchOptions): Primitive<NodeInfo, Info> {
  const { acquireMany, releaseMany, confirmMany, leaveMany, routeKey } = primitive
  if (!routeKey) return primitive
  const key = slotKey(routeKey, cluster)
  const acquirer =
    acquireMany &&
    perNode<AcquireCall, NodeGrant>(
      (exec) => ({
        one: (call, into) => primitive.acquire(exec, call.resource, call.request, into),
        many: (calls) => acquireMany.call(primitive, exec, calls),
        ...key,
      }),
      options,
    )
  const releaser =
    releaseMany &&
    perNode<ReleaseCall, Released>(
      (exec) => ({
        one: (call, into) => primitive.release(exec, call.resource, call.token, into),
        many: (calls) => releaseMany.call(primitive, exec, calls),
        ...key,
      }),
      options,
    )
  const confirmer =
    confirmMany &&
    perNode<ConfirmItem, boolean>(
      (exec) => ({
        one: (c, into) => primitive.confirm(exec, c.resource, c.token, c.fence, c.waiter, into),
        many: (items) => confirmMany.call(primitive, exec, items),
        ...key,
      }),
      options,
    )
  const leaver =
    leaveMany &&
    perNode<LeaveItem, unknown>(
      (exec) => ({
        one: (l, into) => void primitive.leave(exec, l.resource, l.waiter).then(into.value, into.error),
        many: (items) => leaveMany.call(primitive, exec, items),
        ...key,
      }),
      options,
    )
  const grouped: Primitive<NodeInfo, Info> = { ...primitive }
  if (acquirer) grouped.acquire = (exec, resource, request, into) => acquirer(exec).push({ resource, request }, into)
  if (releaser) grouped.release = (exec, resource, token, into) => releaser(exec).push({ resource, token }, into)
  if (confirmer) grouped.confirm = (exec, resource, token, fence, waiter, into) => confirmer(exec).push({ resource, token, fence, waiter }, into)
  if (leaver) grouped.leave = (exec, resource, waiter) => promised((into) => leaver(exec).push({ resource, waiter }, into)).then(ignore)
  return grouped
}
