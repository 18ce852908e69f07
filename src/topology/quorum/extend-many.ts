import { clusterSlot } from '../../util/keys.js'
import type { Backend } from '../backend.js'
import type { Primitive } from '../primitive.js'
import { execOf, unconfirmed, type QuorumContext } from './calls.js'
import type { NodeResult } from './node.js'

/**
 * Renewals that fall due together, one script call per node and batch: each lease is decided on
 * its own, as by `extend` (extended on a majority, or lost and given back everywhere). The call
 * ends as soon as every lease is decided, so a dead node costs no more than with single extends.
 * Leases of one batch share the node timeout of the shortest ttl among them.
 */
export function batched<Info>(
  q: QuorumContext<Info>,
  many: NonNullable<Primitive<unknown, Info>['extendMany']>,
  routeKey: (resource: string) => string,
  clusters: boolean,
): Pick<Backend<Info>, 'extendMany' | 'batchKey'> {
  const { nodes, majority } = q
  return {
    async extendMany(leases) {
      const ms = q.nodeTimeout(leases.reduce((min, lease) => Math.min(min, lease.ttl), Infinity))
      const results = await new Promise<(NodeResult<readonly (boolean | Error)[]> | undefined)[]>((resolve) => {
        const got: (NodeResult<readonly (boolean | Error)[]> | undefined)[] = nodes.map(() => undefined)
        const counts = leases.map(() => 0)
        let pending = nodes.length
        const decided = () => counts.every((n) => n >= majority || n + pending < majority)
        nodes.forEach((node, n) => {
          node.run<readonly (boolean | Error)[]>(
            (into) => void many(execOf(node), leases).then(into.value, into.error),
            ms,
            (result) => {
              pending--
              got[n] = result
              if (result.ok) for (let i = 0; i < counts.length; i++) if (result.value[i] === true) counts[i]!++
              if (pending === 0 || decided()) resolve([...got])
            },
          )
        })
      })
      return leases.map((lease, i) => {
        // A lease's error on one node (its reply there made no sense) counts as not extended there.
        const answers = results.map((r): NodeResult<boolean> | undefined => (r?.ok ? { ok: true, value: r.value[i] === true } : r))
        if (answers.filter((a) => a?.ok && a.value).length >= majority) return true
        return unconfirmed(q, lease.resource, lease.token, answers)
      })
    },
    // Nodes that are clusters take a batch per slot; plain nodes any leases together.
    batchKey: clusters ? (resource) => clusterSlot(routeKey(resource)) : () => 0,
  }
}
