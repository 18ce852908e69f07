import type { Attempt, Backend, LockInfo, NoticeSource, WakeSource } from '../backend.js'
import { QuorumError } from '../../errors/errors.js'
import { wakeRefused } from '../../errors/failures.js'
import type { Primitive, Released } from '../primitive.js'
import { groupCommit } from '../group.js'
import { QuorumNode } from './node.js'
import { WaiterBook } from './waiters.js'
import { quorumWake } from './wake.js'
import type { RedisAdapter } from '../../redis/adapter.js'
import { subscriberFor } from '../../redis/subscriber.js'
import { attempt } from './attempt.js'
import { decided, execOf, onEvery, unconfirmed, vote, type QuorumContext } from './calls.js'
import { batched } from './extend-many.js'
import type { Into } from '../../util/into.js'
import { revokeNotice } from '../../lua/embedded.js'

export interface QuorumOptions {
  /** Longest ttl; also how long a restarted node stays out of quorum counting. */
  maxTtl: number
  /** Per-node timeout in ms for a given ttl (much smaller than the ttl). */
  nodeTimeout: (ttl: number) => number
  /**
   * How long a node that started or restarted stays out of quorum counting (ms). Default: maxTtl.
   * 0: it counts at once, as node-redlock counts it (the drop-in `fencelock/redlock` keeps that).
   */
  restartWindow?: number
}

/**
 * Any primitive over independent masters (Redlock), with fences that never go backwards. An
 * attempt runs the primitive's acquire on every node at once (asking for each node's facts); it
 * succeeds when a majority of the nodes that count (not restarted within `maxTtl`) granted the
 * same claim (a mutex has one; a semaphore's claim is its slot, so each slot is a quorum mutex of
 * its own). The lease's fence is the largest fence those nodes returned, confirmed (written back)
 * on a majority while the claim is held there, before the lease exists: every later majority
 * shares a node with that one, so its fence is larger (docs/evidence/safety.md).
 */
export class QuorumBackend<Info = LockInfo> implements Backend<Info> {
  readonly maxTtl: number
  readonly wake: WakeSource
  readonly notices: NoticeSource
  /** Renewals that fall due together, one script call per node and batch (extend-many.ts). */
  readonly extendMany?: Backend<Info>['extendMany']
  readonly batchKey?: Backend<Info>['batchKey']
  readonly #adapters: readonly RedisAdapter[]
  readonly #options: QuorumOptions
  /** The nodes, the majority, the primitive (its calls grouped per node and turn), the waiters' places. */
  readonly #q: QuorumContext<Info>

  constructor(adapters: readonly RedisAdapter[], kind: Primitive<unknown, Info>, options: QuorumOptions) {
    // Per node: the acquisitions (and releases) one turn sends to a node share one script call there,
    // sent when the turn ends (not eagerly: here the client, not a node, is the busy side).
    const clusters = adapters.some((a) => a.isCluster)
    const primitive = groupCommit(kind, clusters, { eager: false })
    const nodes = adapters.map((redis, i) => new QuorumNode(i, redis))
    const majority = Math.floor(nodes.length / 2) + 1
    const book = new WaiterBook()
    this.#adapters = adapters
    this.#options = options
    this.maxTtl = options.maxTtl
    this.#q = { nodes, majority, maxTtl: options.restartWindow ?? options.maxTtl, primitive, book, nodeTimeout: options.nodeTimeout }
    const subscribers = adapters.map((a) => subscriberFor(a))
    this.wake = quorumWake(subscribers, majority, (message) => book.woke(message))
    this.notices = anyNode(subscribers)
    if (primitive.extendMany && primitive.routeKey) {
      const { extendMany, batchKey } = batched(this.#q, primitive.extendMany.bind(primitive), primitive.routeKey.bind(primitive), clusters)
      this.extendMany = extendMany
      this.batchKey = batchKey
    }
  }

  isClosed(): boolean {
    return this.#adapters.filter((a) => a.isClosed()).length > this.#q.nodes.length - this.#q.majority
  }

  attempt(resource: string, token: string, ttl: number, waiter: string, into: Into<Attempt>): void {
    void attempt(this.#q, resource, token, ttl, waiter).then(into.value, into.error)
  }

  async extend(resource: string, token: string, ttl: number): Promise<boolean> {
    const q = this.#q
    const results = await decided<boolean>(
      q,
      (node, into) => void q.primitive.extend(execOf(node), resource, token, ttl).then(into.value, into.error),
      this.#options.nodeTimeout(ttl),
      (extended) => (extended ? '' : undefined),
    )
    if (results.filter((r) => r?.ok && r.value).length >= q.majority) return true
    // A majority can no longer be confirmed: the lease ends now rather than at its deadline, and
    // what is left of the lock on the other nodes is given back at once.
    const lost = unconfirmed(q, resource, token, results)
    if (lost) throw lost
    return false
  }

  release(resource: string, token: string, into: Into<boolean>): void {
    void releaseOnQuorum(this.#q, resource, token, this.#options).then(into.value, into.error)
  }

  async leave(resource: string, waiter: string): Promise<void> {
    const q = this.#q
    q.book.done(resource, waiter)
    await onEvery(q, (node) => q.primitive.leave(execOf(node), resource, waiter), this.#options.nodeTimeout(this.maxTtl))
  }

  async inspect(resource: string): Promise<Info> {
    const { nodes, majority, primitive } = this.#q
    const results = await onEvery(this.#q, (node) => primitive.inspect(execOf(node), resource), this.#options.nodeTimeout(this.maxTtl))
    const views = results.flatMap((r) => (r.ok ? [r.value] : []))
    if (views.length < majority) {
      throw new QuorumError(
        resource,
        'inspect',
        results.map((r, i) => vote(nodes[i]!, r, 'replied')),
        majority,
      )
    }
    return primitive.merge(resource, views, majority)
  }

  channel(resource: string): readonly string[] {
    return this.#q.primitive.channel(resource)
  }

  async announce(channel: string, token: string): Promise<void> {
    const results = await onEvery(this.#q, (node) => revokeNotice.run(execOf(node), [], [channel, token]), this.#options.nodeTimeout(this.maxTtl))
    const failed = results.find((r) => !r.ok)
    if (failed && results.every((r) => !r.ok)) throw failed.error
  }
}

/**
 * Notices heard on any node: each node's subscriber hears them, and the first copy acts (a
 * revocation ended the lease with a release that answered; later copies find it lost already).
 */
function anyNode(sources: readonly NoticeSource[]): NoticeSource {
  return {
    listen: (channel, listener) => Promise.any(sources.map((s) => s.listen(channel, listener))),
    unlisten: (channel, listener) => sources.forEach((s) => s.unlisten(channel, listener)),
  }
}

/**
 * A release on every node, decided once a majority released (or could not): true if this call
 * released the lease somewhere. Rejects with `QuorumError` when no node answered, and with the
 * wake-up's refusal where a node released but could not wake the next waiter.
 */
async function releaseOnQuorum(q: QuorumContext<unknown>, resource: string, token: string, options: QuorumOptions): Promise<boolean> {
  const { nodes, majority, primitive } = q
  const results = await decided<Released>(
    q,
    (node, into) => primitive.release(execOf(node), resource, token, into),
    options.nodeTimeout(options.maxTtl),
    (value) => (value.released ? '' : undefined),
  )
  if (results.every((r) => r !== undefined && !r.ok)) {
    throw new QuorumError(
      resource,
      'release',
      results.map((r, i) => vote(nodes[i]!, r!, 'replied')),
      majority,
    )
  }
  const refused = results.find((r) => r?.ok && r.value.refused !== undefined)
  if (refused?.ok) throw wakeRefused(resource, refused.value.refused!)
  return results.some((r) => r?.ok && r.value.released)
}
