import type { Attempt, Backend, LockInfo } from '../backend.js'
import { QuorumError, type NodeVote } from '../errors.js'
import { keyCache, type ResourceKeys } from '../keys.js'
import type { RedisAdapter } from '../redis/adapter.js'
import { subscriberFor } from '../redis/subscriber.js'
import { decodeRelease, wakeRefused } from '../primitives/mutex.js'
import { scripts } from '../scripts/index.js'
import { QuorumNode, type NodeResult } from './node.js'
import { quorumWake } from './wake.js'
import { WaiterBook } from './waiters.js'

export interface QuorumOptions {
  prefix: string
  /** Longest ttl; also how long a restarted node stays out of quorum counting. */
  maxTtl: number
  fenceRetention: number
  waiterGrace: number
  /** Per-node timeout in ms for a given ttl (much smaller than the ttl). */
  nodeTimeout: (ttl: number) => number
}

const toNumber = (value: unknown): number => (typeof value === 'number' ? value : Number(value))

type AcquireReply = [number, number | string, number, string, string]

/**
 * Redlock over independent masters, with fences that never go backwards. An attempt runs the
 * acquire script on every node at once; it succeeds when a majority of the nodes that count
 * (not restarted within `maxTtl`) granted it. The lease's fence is the largest fence those nodes
 * returned, written back to a majority while the lock is held there, before the lease exists:
 * every later majority shares a node with that one, so its fence is larger (docs/safety.md).
 */
export function quorumBackend(adapters: readonly RedisAdapter[], options: QuorumOptions): Backend {
  const nodes = adapters.map((redis, i) => new QuorumNode(i, redis))
  const majority = Math.floor(nodes.length / 2) + 1
  const retention = String(options.fenceRetention)
  const grace = String(options.waiterGrace)
  const maxTtl = String(options.maxTtl)
  const keysOf = keyCache(options.prefix)

  const book = new WaiterBook()
  const leaveAll = (k: ResourceKeys, waiter: string, except: readonly QuorumNode[] = []): void => {
    for (const node of nodes) {
      if (!except.includes(node)) node.redis.evalScript(scripts.mutexLeave, [k.lock, k.queue, k.queueExpiry], [waiter, k.channel, grace]).catch(() => {})
    }
  }

  const all = <T>(call: (redis: RedisAdapter) => Promise<T>, ms: number): Promise<NodeResult<T>[]> =>
    Promise.all(nodes.map((node) => node.run(call, ms)))

  /**
   * Like `all`, but resolves as soon as the outcome is decided: a majority of replies are `good`,
   * or a majority replied and `good` is out of reach. A dead node must not make every call wait
   * for its timeout. Nodes still pending then are `undefined`; their late replies are ignored (a
   * late grant is this token's, and release and undo reach every node). Without a majority of
   * replies it waits for every node, so that a QuorumError can say what each one did.
   */
  const majorityOf = <T>(call: (redis: RedisAdapter) => Promise<T>, ms: number, good: (value: T, node: QuorumNode) => boolean): Promise<(NodeResult<T> | undefined)[]> =>
    new Promise((resolve) => {
      const results: (NodeResult<T> | undefined)[] = nodes.map(() => undefined)
      let pending = nodes.length
      let goods = 0
      let replied = 0
      nodes.forEach((node, i) => {
        void node.run(call, ms).then((result) => {
          results[i] = result
          pending--
          if (result.ok) replied++
          let isGood = false
          try {
            isGood = result.ok && good(result.value, node)
          } catch {} // a reply of an unexpected shape counts as not good; it must not stall the call
          if (isGood) goods++
          if (goods >= majority || pending === 0 || (replied >= majority && goods + pending < majority)) resolve([...results])
        })
      })
    })

  const vote = (node: QuorumNode, result: NodeResult<unknown>, outcome: NodeVote['outcome']): NodeVote =>
    result.ok ? { node: node.index, outcome } : { node: node.index, outcome: result.timeout ? 'timeout' : 'error', cause: result.error }

  const undo = (resource: string, token: string): void => {
    // Every node, including those that timed out: their acquire may still land. Each client sends
    // this release after the acquire on the same connection, so Redis runs them in that order.
    const k = keysOf(resource)
    for (const node of nodes) {
      node.redis.evalScript(scripts.mutexRelease, [k.lock, k.queue, k.queueExpiry], [token, k.channel, grace]).catch(() => {})
    }
  }

  return {
    maxTtl: options.maxTtl,
    wake: quorumWake(
      adapters.map((a) => subscriberFor(a)),
      majority,
      (message) => book.woke(message),
    ),
    isClosed: () => adapters.filter((a) => a.isClosed()).length > nodes.length - majority,

    async attempt(resource, token, ttl, waiter): Promise<Attempt> {
      const sent = performance.now()
      const k = keysOf(resource)
      const ms = options.nodeTimeout(ttl)
      const score = book.scoreOf(waiter)
      const counts = new Map<QuorumNode, number>() // node -> ms until it counts
      const results = await majorityOf(
        (redis) =>
          redis.evalScript(
            scripts.quorumAcquire,
            [k.lock, k.fence, k.queue, k.queueExpiry],
            [token, ttl, retention, waiter, grace, score, maxTtl],
          ) as Promise<AcquireReply>,
        ms,
        ([code, , young, runId, now], node) => {
          book.sawServerTime(toNumber(now))
          const wait = node.observe(String(runId), toNumber(young), options.maxTtl)
          counts.set(node, wait)
          return toNumber(code) === 1 && wait === 0
        },
      )
      const votes: NodeVote[] = []
      const granted: QuorumNode[] = []
      let counted = 0
      let replied = 0
      let fence = 0
      let retry = Infinity
      results.forEach((result, i) => {
        const node = nodes[i]!
        if (!result) return void votes.push({ node: node.index, outcome: 'timeout' }) // not waited for: the outcome was decided
        if (!result.ok) return void votes.push(vote(node, result, 'error'))
        const [code, value] = result.value
        const wait = counts.get(node) ?? 0
        replied++
        if (toNumber(code) === 1) {
          granted.push(node)
          fence = Math.max(fence, toNumber(value))
          if (wait === 0) counted++
          else retry = Math.min(retry, wait)
          votes.push(wait === 0 ? { node: node.index, outcome: 'acquired' } : { node: node.index, outcome: 'restarting', countsIn: wait })
        } else {
          retry = Math.min(retry, toNumber(value))
          const wait = counts.get(node) ?? 0
          votes.push(wait === 0 ? { node: node.index, outcome: 'held' } : { node: node.index, outcome: 'restarting', countsIn: wait })
        }
      })

      if (counted >= majority) {
        const commits = await Promise.all(
          granted.map((node) => node.run((redis) => redis.evalScript(scripts.quorumCommit, [k.lock, k.fence, k.queue, k.queueExpiry], [token, fence, retention, waiter]), ms)),
        )
        if (commits.filter((c) => c.ok && toNumber(c.value) === 1).length >= majority) {
          if (waiter !== '') {
            // Where the lock was held by another, this waiter joined the queue: leave it, or it
            // would stand at the head there until its place expires and block everyone.
            book.done(resource, waiter)
            leaveAll(k, waiter, granted)
          }
          return { acquired: true, fence }
        }
        undo(resource, token)
        const commitVotes = granted.map((node, i) => {
          const commit = commits[i]!
          return commit.ok ? { node: node.index, outcome: toNumber(commit.value) === 1 ? ('acquired' as const) : ('held' as const) } : vote(node, commit, 'error')
        })
        throw new QuorumError(resource, 'commit the fence of', commitVotes, majority)
      }
      // Undo wherever it may have been granted: nodes that granted, and nodes not waited for.
      if (granted.length > 0 || results.some((r) => r === undefined)) undo(resource, token)
      // Enough nodes answered, the lock is simply taken (or a node is still warming up): wait.
      if (replied >= majority) {
        const woken = book.wokenSince(waiter, sent)
        if (waiter !== '' && !book.queue(resource, waiter)) leaveAll(k, waiter)
        // Held nowhere, only kept from a majority by nodes that do not count yet: say so. (Where
        // some node says held, the lock may well be held: that is contention, as usual.)
        const held = votes.some((v) => v.outcome === 'held')
        const restarting = votes.filter((v) => v.outcome === 'restarting').length
        const blocked = restarting > 0 && !held && counted + restarting >= majority ? new QuorumError(resource, 'acquire', votes, majority) : undefined
        return { acquired: false, retry: woken ? 0 : Number.isFinite(retry) ? retry : ttl, ...(blocked ? { blocked } : {}) }
      }
      throw new QuorumError(resource, 'acquire', votes, majority)
    },

    async extend(resource, token, ttl) {
      const results = await majorityOf(
        (redis) => redis.evalScript(scripts.mutexExtend, [keysOf(resource).lock], [token, ttl]),
        options.nodeTimeout(ttl),
        (value) => toNumber(value) === 1,
      )
      if (results.filter((r) => r?.ok && toNumber(r.value) === 1).length >= majority) return true
      // A majority can no longer be confirmed: the lease ends now rather than at its deadline, and
      // what is left of the lock on the other nodes is given back at once.
      undo(resource, token)
      return false
    },

    async release(resource, token) {
      const k = keysOf(resource)
      const results = await majorityOf(
        async (redis) => decodeRelease(await redis.evalScript(scripts.mutexRelease, [k.lock, k.queue, k.queueExpiry], [token, k.channel, grace])),
        options.nodeTimeout(options.maxTtl),
        (value) => value.released,
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
      const k = keysOf(resource)
      await all((redis) => redis.evalScript(scripts.mutexLeave, [k.lock, k.queue, k.queueExpiry], [waiter, k.channel, grace]), options.nodeTimeout(options.maxTtl))
    },

    async inspect(resource): Promise<LockInfo> {
      const k = keysOf(resource)
      const results = await all(
        (redis) => redis.evalScript(scripts.mutexInspect, [k.lock, k.fence, k.queue, k.queueExpiry], []) as Promise<[string | null, number, string | null, number]>,
        options.nodeTimeout(options.maxTtl),
      )
      const replies = results.flatMap((r) => (r.ok ? [r.value] : []))
      if (replies.length < majority) {
        throw new QuorumError(resource, 'inspect', results.map((r, i) => vote(nodes[i]!, r, 'replied')), majority)
      }
      const pttls = new Map<string, number[]>()
      for (const [token, pttl] of replies) if (typeof token === 'string') pttls.set(token, [...(pttls.get(token) ?? []), toNumber(pttl)])
      // Held = one token on a majority; its ttl is how long a majority still has it.
      const holder = [...pttls].find(([, list]) => list.length >= majority)
      const fences = replies.flatMap(([, , f]) => (f == null ? [] : [Number(f)]))
      return {
        resource,
        held: holder !== undefined,
        token: holder ? holder[0] : null,
        fence: fences.length > 0 ? Math.max(...fences) : null,
        ttl: holder ? holder[1].sort((a, b) => b - a)[majority - 1]! : null,
        waiters: Math.max(0, ...replies.map(([, , , w]) => toNumber(w))),
      }
    },

    channel: (resource) => keysOf(resource).channel,
  }
}
