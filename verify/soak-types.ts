// What the soak's orchestrator tells each soak worker, and what a worker's sample says of it.

/** The three topologies a soak runs at once. */
export type SoakTopology = 'single' | 'cluster' | 'quorum'

export interface SoakWorkerConfig {
  slot: number
  seed: number
  topology: SoakTopology
  client: 'ioredis' | 'node-redis'
  /** The nodes to connect to: a cluster's first node, the quorum's three; none for 'single' (it follows the Sentinels). */
  nodes: { host: string; port: number }[]
  /** 'single': the Sentinels that name the primary, and the name they know it by. */
  sentinels?: { host: string; port: number }[]
  sentinelName?: string
  ttl: number
  wait: number
  /** Pause between two steps of one primitive's loop, ms. */
  idle: [number, number]
}

/**
 * A worker's sample of itself (on SIGUSR2): heap after a full GC, RSS, active handles other than
 * timers, timers other than its loops' own pauses (`allTimers`: with them); what else makes up
 * the RSS (the V8 heap's reserved size and its spaces, memory outside the heap), and what of the
 * heap is compiled code.
 */
export interface WorkerSample {
  kind: 'sample'
  worker: string
  pid: number
  time: number
  heapUsed: number
  rss: number
  handles: number
  timers: number
  heapTotal?: number
  external?: number
  arrayBuffers?: number
  allTimers?: number
  spaces?: Record<string, number>
  /** Each V8 space's used size after the full GC (compiled code: `code_space`, `code_large_object_space`). */
  spacesUsed?: Record<string, number>
}
