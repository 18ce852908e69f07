import type { Backend } from '../topology/backend.js'
import type { TopologyChoice } from './locks-options.js'
import { QuorumBackend } from '../topology/quorum/quorum.js'
import { ReplicatedBackend } from '../topology/replicated.js'
import { SingleBackend } from '../topology/single.js'
import type { Primitive } from '../topology/primitive.js'

/** Runs any primitive on the topology the options describe (the facade knows no topology code beyond this choice). */
export type Topology = <Info>(primitive: Primitive<unknown, Info>) => Backend<Info>

/** The topology the checked options chose (see `readLocksOptions`). */
export function topologyOf(choice: TopologyChoice, maxTtl: number): Topology {
  switch (choice.kind) {
    case 'single':
      return (primitive) => new SingleBackend(choice.redis, primitive, maxTtl)
    case 'replicated':
      return (primitive) => new ReplicatedBackend(choice.redis, primitive, maxTtl, choice.replicas)
    case 'quorum':
      return (primitive) => new QuorumBackend(choice.adapters, primitive, { maxTtl, nodeTimeout: choice.nodeTimeout })
  }
}
