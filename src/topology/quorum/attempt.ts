import { QuorumError, type NodeVote } from '../../errors/errors.js'
import type { Attempt } from '../backend.js'
import type { AttemptRequest, NodeGrant, UndoPlace } from '../primitive.js'
import { decided, execOf, leaveAll, onNodes, undo, vote, type QuorumContext } from './calls.js'
import { NodeUnreachableError, type NodeResult, type QuorumNode } from './node.js'
import { DROPPED } from '../../util/into.js'

/** Where the waiter stands again if the grant is undone: its score on every node. */
const placeOf = ({ waiter, score = '', ttl }: AttemptRequest): UndoPlace => ({ waiter, score, ttl })

/** The nodes that granted one claim (a mutex has one; a semaphore's claim is its slot). */
interface Claim {
  readonly nodes: QuorumNode[]
  /** How many of them count (not restarted within maxTtl). */
  counted: number
  /** The largest fence they returned: the lease's, if this claim wins. */
  fence: number
}

/** What the nodes answered to one attempt, counted. */
interface Tally {
  readonly votes: NodeVote[]
  readonly granted: QuorumNode[]
  readonly claims: Map<string, Claim>
  replied: number
  /** ms until trying again is worth it: the soonest any node named. */
  retry: number
  /** Nodes the attempt was not sent to (their clients were reconnecting): nothing to undo or leave there. */
  readonly unsent: QuorumNode[]
}

type Replies = readonly (NodeResult<NodeGrant> | undefined)[]

/**
 * One attempt of any primitive on a quorum: it succeeds when a majority of the nodes that count
 * granted the same claim; the lease's fence is the largest fence those nodes returned, confirmed
 * (written back) on a majority while the claim is held there, before the lease exists.
 *
 * A waiter's place in line must carry one score on every node, or the nodes order the waiters each
 * their own way, and waiters that are each first on a different node win one node per attempt
 * forever (model/quorum-queue.pml). Scores come from the servers' TIME, which this process learns
 * from its first reply: until then, an attempt for a waiter goes first without a place (uncontended,
 * that is the grant, at no extra cost), and once refused, again with the waiter's shared score.
 */
export async function attempt(q: QuorumContext<unknown>, resource: string, token: string, ttl: number, waiter: string): Promise<Attempt> {
  if (waiter !== '' && !q.book.knowsServerTime()) {
    const placeless = await attemptOnce(q, resource, token, ttl, '')
    if (placeless.acquired || !q.book.knowsServerTime()) return placeless
  }
  return attemptOnce(q, resource, token, ttl, waiter)
}

async function attemptOnce(q: QuorumContext<unknown>, resource: string, token: string, ttl: number, waiter: string): Promise<Attempt> {
  const sent = performance.now()
  const ms = q.nodeTimeout(ttl)
  const request: AttemptRequest = { token, ttl, waiter, score: q.book.scoreOf(waiter), maxTtl: q.maxTtl }
  const counts = new Map<QuorumNode, number>() // node -> ms until it counts
  const results = await decided<NodeGrant>(
    q,
    (node, into) => q.primitive.acquire(execOf(node), resource, request, into),
    ms,
    (grant, node) => {
      const facts = grant.node
      if (!facts) throw new Error(`${resource}: node #${node.index} did not say how it counts`)
      q.book.sawServerTime(facts.now)
      const wait = node.observe(facts.runId, facts.young, q.maxTtl)
      counts.set(node, wait)
      return grant.granted && wait === 0 ? grant.claim : undefined
    },
  )
  const tally = tallyOf(q, results, counts)
  const [claim, won] = [...tally.claims].sort(([, a], [, b]) => b.counted - a.counted)[0] ?? ['', undefined]
  if (won && won.counted >= q.majority) return confirmWon(q, resource, { request, claim, won, tally, ms })
  // Undo wherever it may have been granted: nodes that granted, and nodes not waited for.
  if (tally.granted.length > 0 || results.some((r) => r === undefined)) undo(q, resource, token, placeOf(request), tally.unsent)
  // Enough nodes answered, the lock is simply taken (or a node is still warming up): wait.
  if (tally.replied >= q.majority) return notWon(q, resource, waiter, ttl, sent, tally)
  throw new QuorumError(resource, 'acquire', tally.votes, q.majority)
}

function tallyOf(q: QuorumContext<unknown>, results: Replies, counts: ReadonlyMap<QuorumNode, number>): Tally {
  const tally: Tally = { votes: [], granted: [], claims: new Map(), replied: 0, retry: Infinity, unsent: [] }
  const { votes } = tally
  results.forEach((result, i) => {
    const node = q.nodes[i]!
    if (!result) return void votes.push({ node: node.index, outcome: 'timeout' }) // not waited for: the outcome was decided
    if (!result.ok) {
      if (result.error instanceof NodeUnreachableError) tally.unsent.push(node)
      return void votes.push(vote(node, result, 'error'))
    }
    const grant = result.value
    const wait = counts.get(node) ?? 0
    tally.replied++
    if (grant.granted) {
      tally.granted.push(node)
      const claim = tally.claims.get(grant.claim) ?? { nodes: [], counted: 0, fence: 0 }
      tally.claims.set(grant.claim, claim)
      claim.nodes.push(node)
      claim.fence = Math.max(claim.fence, grant.fence)
      if (wait === 0) claim.counted++
      else tally.retry = Math.min(tally.retry, wait)
      votes.push(wait === 0 ? { node: node.index, outcome: 'acquired' } : { node: node.index, outcome: 'restarting', countsIn: wait })
    } else {
      tally.retry = Math.min(tally.retry, grant.retry)
      votes.push(wait === 0 ? { node: node.index, outcome: 'held' } : { node: node.index, outcome: 'restarting', countsIn: wait })
    }
  })
  return tally
}

interface Won {
  readonly request: AttemptRequest
  readonly claim: string
  readonly won: Claim
  readonly tally: Tally
  readonly ms: number
}

/** The claim won a majority: its fence is confirmed on its nodes, and the lease exists once a majority did. */
async function confirmWon(q: QuorumContext<unknown>, resource: string, { request, claim, won, tally, ms }: Won): Promise<Attempt> {
  const { token, waiter } = request
  const leaseToken = q.primitive.leaseToken(token, claim)
  const confirms = await onNodes<boolean>(won.nodes, (node, into) => q.primitive.confirm(execOf(node), resource, leaseToken, won.fence, waiter, into), ms)
  if (confirms.filter((c) => c.ok && c.value).length >= q.majority) {
    // Other claims this token won elsewhere (a semaphore's nodes disagreed on the slot) are given back.
    if (tally.claims.size > 1)
      for (const node of tally.granted.filter((n) => !won.nodes.includes(n))) q.primitive.release(execOf(node), resource, token, DROPPED)
    if (waiter !== '') {
      // Where the lock was held by another, this waiter joined the queue: leave it, or it
      // would stand at the head there until its place expires and block everyone.
      q.book.done(resource, waiter)
      leaveAll(q, resource, waiter, [...won.nodes, ...tally.unsent])
    }
    return { acquired: true, fence: won.fence, token: leaseToken }
  }
  undo(q, resource, token, placeOf(request), tally.unsent)
  const confirmVotes = won.nodes.map((node, i) => {
    const confirm = confirms[i]!
    return confirm.ok ? { node: node.index, outcome: confirm.value ? ('acquired' as const) : ('held' as const) } : vote(node, confirm, 'error')
  })
  throw new QuorumError(resource, 'commit the fence of', confirmVotes, q.majority)
}

/** No claim won, but a majority answered: the lock is taken (or nodes still warm up), so the caller waits. */
function notWon(q: QuorumContext<unknown>, resource: string, waiter: string, ttl: number, sent: number, tally: Tally): Attempt {
  const woken = q.book.wokenSince(waiter, sent)
  if (waiter !== '' && !q.book.queue(resource, waiter)) leaveAll(q, resource, waiter, tally.unsent)
  // Held nowhere, only kept from a majority by nodes that do not count yet: say so. (Where
  // some node says held, the lock may well be held: that is contention, as usual.)
  const held = tally.votes.some((v) => v.outcome === 'held')
  const restarting = tally.votes.filter((v) => v.outcome === 'restarting').length
  const allCounted = [...tally.claims.values()].reduce((sum, c) => sum + c.counted, 0)
  const blocked = restarting > 0 && !held && allCounted + restarting >= q.majority ? new QuorumError(resource, 'acquire', tally.votes, q.majority) : undefined
  return { acquired: false, retry: woken ? 0 : Number.isFinite(tally.retry) ? tally.retry : ttl, ...(blocked ? { blocked } : {}) }
}
