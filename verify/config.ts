// What the orchestrator tells each worker process (passed as one JSON argument).

export interface BankResource {
  /** Lock name, e.g. 'bank-0'; it guards the accounts listed here. */
  name: string
  accounts: number[]
}

export interface WorkerConfig {
  /** Worker slot; a respawned worker keeps the slot of the one it replaces. */
  slot: number
  /** How many times this slot was (re)spawned, to vary its random stream. */
  generation: number
  /** Where the worker connects: the fault proxies, one per Redis node. */
  nodes: { host: string; port: number }[]
  quorum: boolean
  /** false = control run: unguarded SQL writes and a plain SET instead of fencedSet. */
  fencing: boolean
  /** Passed to `new pg.Client()`. */
  pg: { connectionString?: string; connectionTimeoutMillis: number }
  schema: string
  resources: BankResource[]
  prefix: string
  ttl: number
  wait: number
  /** Time spent between reading the balances and writing them, in ms. */
  hold: [number, number]
  seed: number
}

export const workerName = (slot: number): string => `w${slot}`
