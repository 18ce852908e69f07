// The soak's three topologies, started side by side: a primary with a replica behind three
// Sentinels, a 3-master Redis Cluster, and a quorum of three independent masters; and the fault
// each can be given (one a minute, in turn): a failover, a node paused, a node killed and
// restarted empty, the clients' connections cut, a slot migrated.
import { execFileSync } from 'node:child_process'
import { defaultServer, startRedis, startCluster, type RedisCluster, type RedisProcess } from '../harness/redis-server.js'
import { HARNESS_AUTH, startSentinelGroup, type SentinelGroup } from '../harness/sentinel.js'
import { applyFailover } from './apply-failover.js'
import { applyFault, type FaultTargets } from './apply-fault.js'
import type { FaultKind } from './history.js'
import type { PlannedFault } from './nemesis.js'
import type { SoakTopology } from './soak-types.js'

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)))

export interface SoakNodes {
  group: SentinelGroup
  cluster: RedisCluster
  quorum: RedisProcess[]
}

/**
 * Every data node runs without two diagnostic records of Redis whose memory fills once and then
 * stays, none of it the library's: Redis 7's per-command latency histograms (each command name's
 * first call on a node allocates one, 24,688 bytes of `used_memory` on Redis 7.0, kept for the
 * node's life, so a node's memory rose in steps whenever a fault first sent it a command: a
 * migration's MIGRATE, RESTORE-ASKING and CLUSTER SETSLOT, a client's first EVAL there, CLIENT
 * KILL), and the slow log (128 entries by default, each a copy of a slow command's arguments:
 * about 62 KB once full, filled at the pace a loaded machine makes commands slow).
 */
export function soakServerArgs(): string[] {
  const version = /v=(\d+)\./.exec(execFileSync(defaultServer(), ['--version'], { encoding: 'utf8' }))?.[1]
  const slowlog = ['--slowlog-max-len', '0']
  return Number(version) >= 7 ? ['--latency-tracking', 'no', ...slowlog] : slowlog // Redis 6 keeps no such histograms
}

export async function startTopologies(): Promise<SoakNodes> {
  const args = soakServerArgs()
  const group = await startSentinelGroup({ replicas: 1, args })
  const cluster = await startCluster({ masters: 3, args })
  const quorum = [await startRedis({ args }), await startRedis({ args }), await startRedis({ args })]
  return { group, cluster, quorum }
}

export async function stopTopologies(nodes: SoakNodes): Promise<void> {
  await Promise.all([nodes.group.stop(), nodes.cluster.stop(), ...nodes.quorum.map((n) => n.stop())])
}

/** The data nodes of a topology (the Sentinel group's both, whichever is primary). */
export const nodesOf = (nodes: SoakNodes, topology: SoakTopology): readonly RedisProcess[] =>
  topology === 'single' ? nodes.group.nodes : topology === 'cluster' ? nodes.cluster.nodes : nodes.quorum

/** `redis-cli` on a node of the Sentinel group needs the harness's user (its default user may be turned off by a fault). */
export const cliOn = (topology: SoakTopology, node: RedisProcess, ...args: string[]): Promise<string> =>
  topology === 'single' ? node.cli(...HARNESS_AUTH, ...args) : node.cli(...args)

/** The faults, in the order the soak applies them, one a minute. */
export const SOAK_FAULTS: readonly { topology: SoakTopology; kind: string }[] = [
  { topology: 'single', kind: 'failover' },
  { topology: 'cluster', kind: 'migrate' },
  { topology: 'quorum', kind: 'kill-restart' },
  { topology: 'single', kind: 'pause' },
  { topology: 'cluster', kind: 'reconnect' },
  { topology: 'quorum', kind: 'pause' },
  { topology: 'cluster', kind: 'pause' },
  { topology: 'single', kind: 'reconnect' },
  { topology: 'quorum', kind: 'reconnect' },
]

/** How long a paused node stays paused: under the Sentinels' DOWN_AFTER_MS (2 s), so a pause is no failover. */
const PAUSE_MS = 1_500

/** verify's planned fault for `kind`, at once, on node `index`. */
const planned = (id: number, kind: FaultKind, index: number, duration: number): PlannedFault => ({
  id,
  at: 0,
  kind,
  duration,
  index,
  resource: 0,
  delayMs: 1_000,
  justPast: false,
})

/**
 * The warm-up's faults, as indexes into SOAK_FAULTS: every kind at least once and the failover four
 * times, before the base minute. The code a rare path runs (a promotion, a reconnect) is compiled
 * and tiered up by V8 the first few times it runs; in the hour of 7 December one worker's heap
 * rose in steps at the 2nd, 3rd and 4th failovers and was flat through the next three. Growth is
 * judged from the base minute on, so those first times belong before it.
 */
export const WARMUP_FAULTS: readonly number[] = [0, 1, 2, 0, 4, 5, 0, 6, 8, 0, 3, 7]

/** Fault kind `kind` (an index into SOAK_FAULTS; by default number `id` of the rotation), applied and recorded through `t` (whose redisNodes are the topology's nodes). */
export async function applySoakFault(
  nodes: SoakNodes,
  id: number,
  t: FaultTargets,
  record: (what: string) => void,
  kindIndex = (id - 1) % SOAK_FAULTS.length,
): Promise<string> {
  const { topology, kind } = SOAK_FAULTS[kindIndex]!
  const list = nodesOf(nodes, topology)
  const index = id % list.length
  const node = topology === 'single' ? await nodes.group.primary() : list[index]!
  const label = `${topology} ${kind}`
  record(`start ${label}`)
  if (kind === 'failover') await applyFailover(t, nodes.group, planned(id, 'failover-kill', 0, 8_000))
  else if (kind === 'kill-restart') await applyFault({ ...t, redisNodes: [...list] }, planned(id, 'kill-redis', index, 500))
  else if (kind === 'pause') {
    node.pause()
    await sleep(PAUSE_MS)
    node.resume()
  } else if (kind === 'reconnect') {
    await cliOn(topology, node, 'CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes').catch(() => '')
    await cliOn(topology, node, 'CLIENT', 'KILL', 'TYPE', 'pubsub').catch(() => '')
  } else await migrateOne(nodes.cluster, id)
  record(`end ${label}`)
  return label
}

/** The slot of one of the cluster's soak resources moved to another master. */
async function migrateOne(cluster: RedisCluster, id: number): Promise<void> {
  const names = ['cluster:m0', 'cluster:m1', 'cluster:sem', 'cluster:rw', 'cluster:acct-a', 'cluster:leader']
  const slot = await cluster.slotOf(`{${names[id % names.length]!}}`)
  const from = await cluster.nodeForSlot(slot)
  const masters = await cluster.masters()
  await cluster.migrateSlot(slot, masters.find((m) => m !== from)!)
}
