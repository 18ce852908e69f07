// The soak's per-minute samples (each worker's heap, RSS, handles, timers and subscriber
// connections; each node's used_memory and key count) and the flatness verdict: growth under 5%
// from minute 5 to the end (from the middle sample in a run shorter than 10 minutes).
import type { WorkerSample } from './soak-types.js'

/** A node's memory and keys, and its run id: a node restarted (empty) since the base sample is not judged. */
export interface NodeSample {
  usedMemory: number
  keys: number
  runId: string
  /** `master` or `slave` (INFO replication): a replica promoted since the base carries a primary's load, and is not judged against its own past. */
  role?: string
  /** What makes up `used_memory` (INFO memory, clients, stats, server; the fields of MEMORY_PARTS) where the server reports it. */
  parts?: Record<string, number>
}

/** INFO fields kept beside `used_memory`: where a node's memory goes (the script cache, client buffers, the replication backlog, the cluster bus). */
const MEMORY_PARTS = [
  'used_memory_dataset',
  'used_memory_overhead',
  'used_memory_startup',
  'used_memory_scripts',
  'used_memory_scripts_eval',
  'number_of_cached_scripts',
  'used_memory_vm_eval',
  'mem_clients_normal',
  'mem_clients_slaves',
  'mem_replication_backlog',
  'mem_cluster_links',
  'mem_aof_buffer',
  'mem_not_counted_for_evict',
  'connected_clients',
  'cluster_connections',
  'pubsub_channels',
  'pubsub_patterns',
  'total_connections_received',
]

export interface MinuteSample {
  minute: number
  workers: Record<string, WorkerSample & { subscribers: number }>
  nodes: Record<string, NodeSample>
}

/** Growth allowed from the base sample to the last one. */
export const MAX_GROWTH = 0.05

/**
 * A count (handles, timers, keys, subscriber connections) is the floor of several readings (five
 * for a worker, KEY_READINGS for a node's keys), yet may still hold what was in flight through all
 * of them (a held lock's key, a wait's timer): a rise of this many is noise, not growth.
 */
export const COUNT_NOISE = 2

/**
 * Readings of a node's key count, 100 ms apart, whose floor is its sample: about two seconds, so
 * that a moment with no lease held or waited for on a resource is likely among them (holds are 5
 * to 300 ms, pauses 40 to 250 ms) and the floor counts what stays, not what was in flight.
 */
const KEY_READINGS = 20

/** A node's `used_memory`, its role and key count (the sum of its databases' keys; the floor of KEY_READINGS readings). */
export async function nodeSample(cli: (...args: string[]) => Promise<string>): Promise<NodeSample> {
  const memory = await cli('INFO', 'memory').catch(() => '')
  const server = await cli('INFO', 'server').catch(() => '')
  const role = /^role:(\w+)/m.exec(await cli('INFO', 'replication').catch(() => ''))?.[1]
  const more = `${memory}\n${await cli('INFO', 'clients').catch(() => '')}\n${await cli('INFO', 'stats').catch(() => '')}`
  const parts: Record<string, number> = {}
  for (const field of MEMORY_PARTS) {
    const value = new RegExp(`^${field}:(\\d+)`, 'm').exec(more)?.[1]
    if (value !== undefined) parts[field] = Number(value)
  }
  let keys = Number.POSITIVE_INFINITY
  for (let i = 0; i < KEY_READINGS; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 100))
    const keyspace = await cli('INFO', 'keyspace').catch(() => '')
    keys = Math.min(
      keys,
      [...keyspace.matchAll(/keys=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0),
    )
  }
  return {
    usedMemory: Number(/^used_memory:(\d+)/m.exec(memory)?.[1] ?? Number.NaN),
    keys,
    runId: /^run_id:(\w+)/m.exec(server)?.[1] ?? '',
    ...(role ? { role } : {}),
    parts,
  }
}

/**
 * Subscriber connections per worker on a node: CLIENT LIST lines with a subscription, attributed by
 * `workerOf` from the connection's name (`soak-w3`; ioredis' cluster subscriber keeps a name of its own).
 */
export async function subscribersOf(cli: (...args: string[]) => Promise<string>, workerOf: (name: string) => string | undefined): Promise<Map<string, number>> {
  const list = await cli('CLIENT', 'LIST').catch(() => '')
  const counts = new Map<string, number>()
  for (const line of list.split('\n')) {
    const worker = workerOf(/\bname=(\S*)/.exec(line)?.[1] ?? '')
    const subscribed = /\b(sub|psub|ssub)=([1-9]\d*)/.test(line) || /\bflags=\S*P/.test(line)
    if (worker && subscribed) counts.set(worker, (counts.get(worker) ?? 0) + 1)
  }
  return counts
}

export interface Growth {
  series: string
  base: number
  end: number
  growth: number
  ok: boolean
}

/** The base sample: minute 5 of a run of 10 minutes or more, else the middle one. */
export const baseMinute = (minutes: number): number => (minutes >= 10 ? 5 : Math.max(1, Math.floor(minutes / 2)))

/**
 * A node's `used_memory` less its script cache (`used_memory_scripts_eval`): the cache holds each of
 * the library's scripts once per node, the first time one runs there (a slot migrated to a node
 * brings its kind's scripts), so it is bounded by the scripts the library ships and is reported
 * apart (`number_of_cached_scripts`), not judged as growth.
 */
export const memoryLessScripts = (n: NodeSample): number => n.usedMemory - (n.parts?.used_memory_scripts_eval ?? 0)

/**
 * RSS is judged by its trend, not by two readings: V8 and the allocator size their pools to the
 * load (the young generation grows towards its maximum, freed pages are kept for a while, and
 * released now and then: a single minute may read 20 MiB low), so RSS climbs for tens of minutes
 * and moves by megabytes between two minutes while the heap after a full GC stays flat. The trend
 * is the median slope of every pair of the second half's samples (Theil-Sen: a dip or a spike at
 * one minute does not tilt it), projected over the judged span (base minute to the end), as a
 * share of that half's median: a leak of constant rate shows in full (2 MiB a minute over 55
 * minutes is +90%), a plateau reads near 0.
 */
export function trendGrowth(points: readonly (readonly [minute: number, value: number])[], span: number): number {
  const slopes: number[] = []
  for (const [i, [x1, y1]] of points.entries()) for (const [x2, y2] of points.slice(i + 1)) if (x2 !== x1) slopes.push((y2 - y1) / (x2 - x1))
  const level = median(points.map(([, y]) => y))
  return slopes.length === 0 || level === 0 ? 0 : (median(slopes) * span) / level
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length === 0 ? 0 : sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** Each series' growth from the base minute to the last sample, judged against MAX_GROWTH (counts: COUNT_NOISE; RSS: trendGrowth). */
export function growthOf(samples: readonly MinuteSample[], minutes: number): Growth[] {
  const base = samples.find((s) => s.minute === baseMinute(minutes))
  const last = samples.at(-1)
  if (!base || !last || last === base) return []
  const out: Growth[] = []
  const judge = (series: string, a: number, b: number, count: boolean, trend?: number) => {
    const growth = trend ?? (a > 0 ? (b - a) / a : b > 0 ? Number.POSITIVE_INFINITY : 0)
    out.push({ series, base: a, end: b, growth, ok: growth < MAX_GROWTH || (count && b - a <= COUNT_NOISE) })
  }
  const half = samples.filter((s) => s.minute >= Math.max(base.minute, last.minute / 2))
  for (const [w, s] of Object.entries(last.workers)) {
    const b = base.workers[w]
    if (!b || b.pid !== s.pid) continue
    const rss = half.flatMap((h) => (h.workers[w]?.pid === s.pid ? [[h.minute, h.workers[w]!.rss] as const] : []))
    judge(`${w} heap used`, b.heapUsed, s.heapUsed, false)
    judge(`${w} rss (trend of the last half)`, b.rss, s.rss, false, trendGrowth(rss, last.minute - base.minute))
    judge(`${w} handles`, b.handles, s.handles, true)
    judge(`${w} timers`, b.timers, s.timers, true)
    judge(`${w} subscriber connections`, b.subscribers, s.subscribers, true)
  }
  for (const [n, s] of Object.entries(last.nodes)) {
    const b = base.nodes[n]
    if (!b || b.runId !== s.runId || b.role !== s.role) continue
    judge(`${n} used_memory less scripts`, memoryLessScripts(b), memoryLessScripts(s), false)
    if (!n.startsWith('cluster ')) judge(`${n} keys`, b.keys, s.keys, true)
  }
  // A migrated slot moves its keys to another master: the cluster's keys are judged together.
  const clusterKeys = (m: MinuteSample) => Object.entries(m.nodes).reduce((a, [n, x]) => a + (n.startsWith('cluster ') ? x.keys : 0), 0)
  const restarted = Object.entries(last.nodes).some(([n, x]) => n.startsWith('cluster ') && base.nodes[n]?.runId !== x.runId)
  if (clusterKeys(base) > 0 && !restarted) judge('cluster keys (all masters)', clusterKeys(base), clusterKeys(last), true)
  return out
}
