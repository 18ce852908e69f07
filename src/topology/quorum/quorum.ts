import type { Backend } from '../backend.js'
import { LockLostError, QuorumError, type NodeVote } from '../../errors/errors.js'
import { wakeRefused } from '../../errors/failures.js'
import { clusterSlot } from '../../util/keys.js'
import type { Primitive, QuorumNodeGrant } from '../primitive.js'
import { QuorumNode, type NodeResult } from './node.js'
import { WaiterBook } from './waiters.js'
import { quorumWake } from './wake.js'
import type { RedisAdapter } from '../../redis/adapter.js'
import { subscriberFor } from '../../redis/subscriber.js'
import type { Exec } from '../../lua/binding.js'

export interface QuorumOptions {
  /** Longest ttl; also how long a restarted node stays out of quorum counting. */
  maxTtl: number
  /** Per-node timeout in ms for a given ttl (much smaller than the ttl). */
  nodeTimeout: (ttl: number) => number
}

/**
 * Any primitive over independent masters (Redlock), with fences that never go backwards. An
 * attempt runs the primitive's quorum acquire on every node at once; it succeeds when a majority
 * of the nodes that count (not restarted within `maxTtl`) granted the same claim (a mutex has one;
 * a semaphore's claim is its slot, so each slot is a quorum mutex of its own). The lease's fence is
 * the largest fence those nodes returned, written back to a majority while the claim is held there,
 * before the lease exists: every later majority shares a node with that one, so its fence is
 * larger (docs/safety.md).
 */
export function quorum<Info>(adapters: readonly RedisAdapter[], primitive: Primitive<unknown, Info>, options: QuorumOptions): Backend<Info> {
  const nodes = adapters.map((redis, i) => new QuorumNode(i, redis))
  const majority = Math.floor(nodes.length / 2) + 1
  const maxTtl = options.maxTtl
  const book = new WaiterBook()
  const exec = (node: QuorumNode): Exec => node.redis.evalScript

  const leaveAll = (resource: string, waiter: string, except: readonly QuorumNode[] = []): void => {
    for (const node of nodes) if (!except.includes(node)) primitive.leave(exec(node), resource, waiter).catch(() => {})
  }
  const all = <T>(call: (node: QuorumNode) => Promise<T>, ms: number): Promise<NodeResult<T>[]> =>
    Promise.all(nodes.map((node) => node.run(() => call(node), ms)))

  /**
   * Like `all`, but resolves as soon as the outcome is decided: a majority of replies fall in the
   * same `bucket` (a grant of one claim), or a majority replied and no bucket can reach a majority
   * any more. A dead node must not make every call wait for its timeout. Nodes still pending then
   * are `undefined`; their late replies are ignored (a late grant is this token's, and release and
   * undo reach every node). Without a majority of replies it waits for every node, so that a
   * QuorumError can say what each one did.
   */
  const majorityOf = <T>(call: (node: QuorumNode) => Promise<T>, ms: number, bucket: (value: T, node: QuorumNode) => string | undefined): Promise<(NodeResult<T> | undefined)[]> =>
    new Promise((resolve) => {
      const results: (NodeResult<T> | undefined)[] = nodes.map(() => undefined)
      const buckets = new Map<string, number>()
      let pending = nodes.length
      let replied = 0
      let best = 0
      nodes.forEach((node, i) => {
        void node.run(() => call(node), ms).then((result) => {
          results[i] = result
          pending--
          if (result.ok) replied++
          let key: string | undefined
          try {
            key = result.ok ? bucket(result.value, node) : undefined
          } catch {} // a reply of an unexpected shape counts as no grant; it must not stall the call
          if (key !== undefined) {
            const count = (buckets.get(key) ?? 0) + 1
            buckets.set(key, count)
            best = Math.max(best, count)
          }
          if (best >= majority || pending === 0 || (replied >= majority && best + pending < majority)) resolve([...results])
        })
      })
    })

  const vote = (node: QuorumNode, result: NodeResult<unknown>, outcome: NodeVote['outcome']): NodeVote =>
    result.ok ? { node: node.index, outcome } : { node: node.index, outcome: result.timeout ? 'timeout' : 'error', cause: result.error }

  /**
   * A lease that a majority did not confirm, undone everywhere: false (Redis refused it) when the
   * refusals alone leave no majority, else lost as 'unreachable' (the verdict to reject with): the
   * nodes that did not answer (timed out, failed) are why, and its QuorumError says what each did.
   */
  const unconfirmed = (resource: string, token: string, results: readonly (NodeResult<boolean> | undefined)[]): false | LockLostError => {
    undo(resource, token)
    const yes = results.filter((r) => r?.ok && r.value).length
    const no = results.filter((r) => r?.ok && !r.value).length
    if (yes + (nodes.length - yes - no) < majority) return false
    const votes = results.map((r, i): NodeVote => (r ? vote(nodes[i]!, r, 'replied') : { node: i, outcome: 'timeout' }))
    return new LockLostError(resource, 'unreachable', { cause: new QuorumError(resource, 'extend', votes, majority) })
  }

  const undo = (resource: string, token: string): void => {
    // Every node, including those that timed out: their acquire may still land. Each client sends
    // this release after the acquire on the same connection, so Redis runs them in that order.
    // Then every node wakes its line if the lock is free there: a grant undone on the few nodes
    // that gave it wakes only those, short of the majority a wake-up needs, and waiters it kept
    // out would sleep until their re-check (the ttl) though nobody holds the lock.
    for (const node of nodes) {
      primitive
        .release(exec(node), resource, token)
        .then(() => primitive.leave(exec(node), resource, ''))
        .catch(() => {})
    }
  }

  /**
   * Renewals that fall due together, one script call per node and batch: each lease is decided on
   * its own, as by `extend` (extended on a majority, or lost and given back everywhere). The call
   * ends as soon as every lease is decided, so a dead node costs no more than with single extends.
   * Leases of one batch share the node timeout of the shortest ttl among them.
   */
  const batched = (many: NonNullable<Primitive<unknown, Info>['extendMany']>, routeKey: (resource: string) => string): Pick<Backend<Info>, 'extendMany' | 'batchKey'> => ({
    async extendMany(leases) {
      const ms = options.nodeTimeout(leases.reduce((min, lease) => Math.min(min, lease.ttl), Infinity))
      const results = await new Promise<(NodeResult<readonly (boolean | Error)[]> | undefined)[]>((resolve) => {
        const got: (NodeResult<readonly (boolean | Error)[]> | undefined)[] = nodes.map(() => undefined)
        const counts = leases.map(() => 0)
        let pending = nodes.length
        const decided = () => counts.every((n) => n >= majority || n + pending < majority)
        nodes.forEach((node, n) => {
          void node.run(() => many(exec(node), leases), ms).then((result) => {
            pending--
            got[n] = result
            if (result.ok) for (let i = 0; i < counts.length; i++) if (result.value[i] === true) counts[i]!++
            if (pending === 0 || decided()) resolve([...got])
          })
        })
      })
      return leases.map((lease, i) => {
        // A lease's error on one node (its reply there made no sense) counts as not extended there.
        const answers = results.map((r): NodeResult<boolean> | undefined => (r?.ok ? { ok: true, value: r.value[i] === true } : r))
        if (answers.filter((a) => a?.ok && a.value).length >= majority) return true
        return unconfirmed(lease.resource, lease.token, answers)
      })
    },
    // Nodes that are clusters take a batch per slot; plain nodes any leases together.
    batchKey: adapters.some((a) => a.isCluster) ? (resource) => clusterSlot(routeKey(resource)) : () => 0,
  })

  return {
    maxTtl,
    wake: quorumWake(
      adapters.map((a) => subscriberFor(a)),
      majority,
      (message) => book.woke(message),
    ),
    isClosed: () => adapters.filter((a) => a.isClosed()).length > nodes.length - majority,

    async attempt(resource, token, ttl, waiter) {
      const sent = performance.now()
      const ms = options.nodeTimeout(ttl)
      const score = book.scoreOf(waiter)
      const counts = new Map<QuorumNode, number>() // node -> ms until it counts
      const results = await majorityOf(
        (node) => primitive.quorumAcquire(exec(node), resource, { token, ttl, waiter, score, maxTtl }),
        ms,
        (grant: QuorumNodeGrant, node) => {
          book.sawServerTime(grant.now)
          const wait = node.observe(grant.runId, grant.young, maxTtl)
          counts.set(node, wait)
          return grant.granted && wait === 0 ? grant.claim : undefined
        },
      )
      const votes: NodeVote[] = []
      const granted: QuorumNode[] = []
      const claims = new Map<string, { nodes: QuorumNode[]; counted: number; fence: number }>()
      let replied = 0
      let retry = Infinity
      results.forEach((result, i) => {
        const node = nodes[i]!
        if (!result) return void votes.push({ node: node.index, outcome: 'timeout' }) // not waited for: the outcome was decided
        if (!result.ok) return void votes.push(vote(node, result, 'error'))
        const grant = result.value
        const wait = counts.get(node) ?? 0
        replied++
        if (grant.granted) {
          granted.push(node)
          const claim = claims.get(grant.claim) ?? { nodes: [], counted: 0, fence: 0 }
          claims.set(grant.claim, claim)
          claim.nodes.push(node)
          claim.fence = Math.max(claim.fence, grant.fence)
          if (wait === 0) claim.counted++
          else retry = Math.min(retry, wait)
          votes.push(wait === 0 ? { node: node.index, outcome: 'acquired' } : { node: node.index, outcome: 'restarting', countsIn: wait })
        } else {
          retry = Math.min(retry, grant.retry)
          votes.push(wait === 0 ? { node: node.index, outcome: 'held' } : { node: node.index, outcome: 'restarting', countsIn: wait })
        }
      })

      const [claim, won] = [...claims].sort(([, a], [, b]) => b.counted - a.counted)[0] ?? ['', undefined]
      const counted = won?.counted ?? 0
      if (won && counted >= majority) {
        const leaseToken = primitive.leaseToken(token, claim)
        const commits = await Promise.all(won.nodes.map((node) => node.run(() => primitive.commit(exec(node), resource, leaseToken, won.fence, waiter), ms)))
        if (commits.filter((c) => c.ok && c.value).length >= majority) {
          // Other claims this token won elsewhere (a semaphore's nodes disagreed on the slot) are given back.
          if (claims.size > 1) for (const node of granted.filter((n) => !won.nodes.includes(n))) primitive.release(exec(node), resource, token).catch(() => {})
          if (waiter !== '') {
            // Where the lock was held by another, this waiter joined the queue: leave it, or it
            // would stand at the head there until its place expires and block everyone.
            book.done(resource, waiter)
            leaveAll(resource, waiter, won.nodes)
          }
          return { acquired: true, fence: won.fence, token: leaseToken }
        }
        undo(resource, token)
        const commitVotes = won.nodes.map((node, i) => {
          const commit = commits[i]!
          return commit.ok ? { node: node.index, outcome: commit.value ? ('acquired' as const) : ('held' as const) } : vote(node, commit, 'error')
        })
        throw new QuorumError(resource, 'commit the fence of', commitVotes, majority)
      }
      // Undo wherever it may have been granted: nodes that granted, and nodes not waited for.
      if (granted.length > 0 || results.some((r) => r === undefined)) undo(resource, token)
      // Enough nodes answered, the lock is simply taken (or a node is still warming up): wait.
      if (replied >= majority) {
        const woken = book.wokenSince(waiter, sent)
        if (waiter !== '' && !book.queue(resource, waiter)) leaveAll(resource, waiter)
        // Held nowhere, only kept from a majority by nodes that do not count yet: say so. (Where
        // some node says held, the lock may well be held: that is contention, as usual.)
        const held = votes.some((v) => v.outcome === 'held')
        const restarting = votes.filter((v) => v.outcome === 'restarting').length
        const allCounted = [...claims.values()].reduce((sum, c) => sum + c.counted, 0)
        const blocked = restarting > 0 && !held && allCounted + restarting >= majority ? new QuorumError(resource, 'acquire', votes, majority) : undefined
        return { acquired: false, retry: woken ? 0 : Number.isFinite(retry) ? retry : ttl, ...(blocked ? { blocked } : {}) }
      }
      throw new QuorumError(resource, 'acquire', votes, majority)
    },

    async extend(resource, token, ttl) {
      const results = await majorityOf(
        (node) => primitive.extend(exec(node), resource, token, ttl),
        options.nodeTimeout(ttl),
        (extended) => (extended ? '' : undefined),
      )
      if (results.filter((r) => r?.ok && r.value).length >= majority) return true
      // A majority can no longer be confirmed: the lease ends now rather than at its deadline, and
      // what is left of the lock on the other nodes is given back at once.
      const lost = unconfirmed(resource, token, results)
      if (lost) throw lost
      return false
    },

    ...(primitive.extendMany && primitive.routeKey ? batched(primitive.extendMany, primitive.routeKey) : {}),

    async release(resource, token) {
      const results = await majorityOf(
        (node) => primitive.release(exec(node), resource, token),
        options.nodeTimeout(maxTtl),
        (value) => (value.released ? '' : undefined),
      )
      if (results.every((r) => r !== undefined && !r.ok)) {
        throw new QuorumError(resource, 'release', results.map((r, i) => vote(nodes[i]!, r!, 'replied')), majority)
      }
      const refused = results.find((r) => r?.ok && r.value.refused !== undefined)
      if (refused?.ok) throw wakeRefused(resource, refused.value.refused!)
      return results.some((r) => r?.ok && r.value.released)
    },

    async leave(resource, waiter) {
      book.done(resource, waiter)
      await all((node) => primitive.leave(exec(node), resource, waiter), options.nodeTimeout(maxTtl))
    },

    async inspect(resource) {
      const results = await all((node) => primitive.inspect(exec(node), resource), options.nodeTimeout(maxTtl))
      const views = results.flatMap((r) => (r.ok ? [r.value] : []))
      if (views.length < majority) {
        throw new QuorumError(resource, 'inspect', results.map((r, i) => vote(nodes[i]!, r, 'replied')), majority)
      }
      return primitive.merge(resource, views, majority)
    },

    channel: (resource) => primitive.channel(resource),
  }
}
