// The soak's per-minute samples (each worker's heap, RSS, handles, timers and subscriber
// connections; each node's used_memory and key count) and the flatness verdict: growth under 5%
// from minute 5 to the end (from the middle sample in a run shorter than 10 minutes).
import type { WorkerSample } from './soak-types.js'

/** A node's memory and keys, and its run id: a node restarted (empty) since the base sample is not judged. */
export interface NodeSample {
  usedMemory: number
  keys: number
  runId: string
}

export interface MinuteSample {
  minute: number
  workers: Record<string, WorkerSample & { subscribers: number }>
  nodes: Record<string, NodeSample>
}

/** Growth allowed from the base sample to the last one. */
export const MAX_GROWTH = 0.05

/**
 * A count (handles, timers, keys, subscriber connections) is the floor of five readings, yet may
 * still hold what was in flight through all five (a held lock's key, a wait's timer): a rise of
 * this many is noise, not growth.
 */
export const COUNT_NOISE = 2

/** A node's `used_memory` and key count (the sum of its databases' keys; the floor of five readings 100 ms apart, as for the workers' handles). */
export async function nodeSample(cli: (...args: string[]) => Promise<string>): Promise<NodeSample> {
  const memory = await cli('INFO', 'memory').catch(() => '')
  const server = await cli('INFO', 'server').catch(() => '')
  let keys = Number.POSITIVE_INFINITY
  for (let i = 0; i < 5; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 100))
    const keyspace = await cli('INFO', 'keyspace').catch(() => '')
    keys = Math.min(
      keys,
      [...keyspace.matchAll(/keys=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0),
    )
  }
  return { usedMemory: Number(/^used_memory:(\d+)/m.exec(memory)?.[1] ?? Number.NaN), keys, runId: /^run_id:(\w+)/m.exec(server)?.[1] ?? '' }
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

/** Each series' growth from the base minute to the last sample, judged against MAX_GROWTH (counts: COUNT_NOISE). */
export function growthOf(samples: readonly MinuteSample[], minutes: number): Growth[] {
  const base = samples.find((s) => s.minute === baseMinute(minutes))
  const last = samples.at(-1)
  if (!base || !last || last === base) return []
  const out: Growth[] = []
  const judge = (series: string, a: number, b: number, count: boolean) => {
    const growth = a > 0 ? (b - a) / a : b > 0 ? Number.POSITIVE_INFINITY : 0
    out.push({ series, base: a, end: b, growth, ok: growth < MAX_GROWTH || (count && b - a <= COUNT_NOISE) })
  }
  for (const [w, s] of Object.entries(last.workers)) {
    const b = base.workers[w]
    if (!b || b.pid !== s.pid) continue
    judge(`${w} heap used`, b.heapUsed, s.heapUsed, false)
    judge(`${w} rss`, b.rss, s.rss, false)
    judge(`${w} handles`, b.handles, s.handles, true)
    judge(`${w} timers`, b.timers, s.timers, true)
    judge(`${w} subscriber connections`, b.subscribers, s.subscribers, true)
  }
  for (const [n, s] of Object.entries(last.nodes)) {
    const b = base.nodes[n]
    if (!b || b.runId !== s.runId) continue
    judge(`${n} used_memory`, b.usedMemory, s.usedMemory, false)
    judge(`${n} keys`, b.keys, s.keys, true)
  }
  return out
}
