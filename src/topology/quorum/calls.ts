import { LockLostError, QuorumError, type NodeVote } from '../../errors/errors.js'
import type { Exec } from '../../lua/binding.js'
import { promised, type Into } from '../../util/into.js'
import type { Primitive, Released, UndoPlace } from '../primitive.js'
import type { QuorumNode, NodeResult } from './node.js'
import type { WaiterBook } from './waiters.js'

/** What every step of a quorum shares: its nodes, the majority, and the primitive it runs. */
export interface QuorumContext<Info> {
  readonly nodes: readonly QuorumNode[]
  readonly majority: number
  /** How long a restarted node stays out of quorum counting (the longest ttl, unless QuorumOptions.restartWindow says otherwise). */
  readonly maxTtl: number
  /** The primitive, its calls to each node grouped per turn (see group.ts). */
  readonly primitive: Primitive<unknown, Info>
  readonly book: WaiterBook
  /** Per-node timeout in ms for a given ttl (much smaller than the ttl). */
  readonly nodeTimeout: (ttl: number) => number
}

export const execOf = (node: QuorumNode): Exec => node.redis.evalScript

/** `start` on each of `nodes` at once, each bounded by `ms`; one promise for all, resolved when every node answered or timed out. */
export const onNodes = <T>(nodes: readonly QuorumNode[], start: (node: QuorumNode, into: Into<T>) => void, ms: number): Promise<NodeResult<T>[]> =>
  new Promise((resolve) => {
    const results: NodeResult<T>[] = new Array(nodes.length)
    let pending = nodes.length
    if (pending === 0) return resolve(results)
    nodes.forEach((node, i) =>
      node.run<T>(
        (into) => start(node, into),
        ms,
        (result) => {
          results[i] = result
          if (--pending === 0) resolve(results)
        },
      ),
    )
  })

/** `call` on every node at once, each bounded by `ms`; resolves when every node answered or timed out. */
export const onEvery = <T>(q: QuorumContext<unknown>, call: (node: QuorumNode) => Promise<T>, ms: number): Promise<NodeResult<T>[]> =>
  onNodes<T>(q.nodes, (node, into) => void call(node).then(into.value, into.error), ms)

/**
 * Like `onEvery`, but resolves as soon as the outcome is decided: a majority of replies fall in
 * the same `bucket` (a grant of one claim), or a majority replied and no bucket can reach a
 * majority any more. A dead node must not make every call wait for its timeout. Nodes still
 * pending then are `undefined`; their late replies are ignored (a late grant is this token's, and
 * release and undo reach every node). Without a majority of replies it waits for every node, so
 * that a QuorumError can say what each one did.
 */
export const decided = <T>(
  q: QuorumContext<unknown>,
  start: (node: QuorumNode, into: Into<T>) => void,
  ms: number,
  bucket: (value: T, node: QuorumNode) => string | undefined,
): Promise<(NodeResult<T> | undefined)[]> =>
  new Promise((resolve) => {
    const { nodes, majority } = q
    const results: (NodeResult<T> | undefined)[] = nodes.map(() => undefined)
    const buckets = new Map<string, number>()
    let pending = nodes.length
    let replied = 0
    let best = 0
    let done = false
    nodes.forEach((node, i) => {
      node.run<T>(
        (into) => start(node, into),
        ms,
        (result) => {
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
          if (!done && (best >= majority || pending === 0 || (replied >= majority && best + pending < majority))) {
            done = true
            resolve([...results])
          }
        },
      )
    })
  })

export const vote = (node: QuorumNode, result: NodeResult<unknown>, outcome: NodeVote['outcome']): NodeVote =>
  result.ok ? { node: node.index, outcome } : { node: node.index, outcome: result.timeout ? 'timeout' : 'error', cause: result.error }

/** The waiter leaves the queue on every node but `except`, without waiting for the replies. */
export const leaveAll = (q: QuorumContext<unknown>, resource: string, waiter: string, except: readonly QuorumNode[] = []): void => {
  for (const node of q.nodes) if (!except.includes(node)) q.primitive.leave(execOf(node), resource, waiter).catch(() => {})
}

const NO_PLACE: UndoPlace = { waiter: '', score: '', ttl: 0 }

export const undo = (q: QuorumContext<unknown>, resource: string, token: string, place: UndoPlace = NO_PLACE, unsent: readonly QuorumNode[] = []): void => {
  // Every node, including those that timed out: their acquire may still land. Each client sends
  // this release after the acquire on the same connection, so Redis runs them in that order.
  // Then every node wakes its line if the lock is free there: a grant undone on the few nodes
  // that gave it wakes only those, short of the majority a wake-up needs, and waiters it kept
  // out would sleep until their re-check (the ttl) though nobody holds the lock. A primitive whose
  // grants with nobody in line take no place puts the waiter's place back in the same call.
  // Not to a node the acquire was never sent to (`unsent`: its client was reconnecting).
  const primitive = q.primitive
  for (const node of q.nodes) {
    if (unsent.includes(node)) continue
    const exec = execOf(node)
    const undone = primitive.undo
      ? primitive.undo(exec, resource, token, place)
      : promised<Released>((into) => primitive.release(exec, resource, token, into)).then(() => primitive.leave(exec, resource, ''))
    undone.catch(() => {})
  }
}

/**
 * A lease that a majority did not confirm, undone everywhere: false (Redis refused it) when the
 * refusals alone leave no majority, else lost as 'unreachable' (the verdict to reject with): the
 * nodes that did not answer (timed out, failed) are why, and its QuorumError says what each did.
 */
export const unconfirmed = (
  q: QuorumContext<unknown>,
  resource: string,
  token: string,
  results: readonly (NodeResult<boolean> | undefined)[],
): false | LockLostError => {
  undo(q, resource, token)
  const { nodes, majority } = q
  const yes = results.filter((r) => r?.ok && r.value).length
  const no = results.filter((r) => r?.ok && !r.value).length
  if (yes + (nodes.length - yes - no) < majority) return false
  const votes = results.map((r, i): NodeVote => (r ? vote(nodes[i]!, r, 'replied') : { node: i, outcome: 'timeout' }))
  return new LockLostError(resource, 'unreachable', { cause: new QuorumError(resource, 'extend', votes, majority) })
}
