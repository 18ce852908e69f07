// What connecting gives the CLI: one opened client per node, and all of them together.
import type { RedisClient } from '../index.js'
import type { ScanNode } from './scan.js'
import type { ClientName } from './values.js'

/** The connected clients, and what the CLI needs besides `createLocks`. */
export interface Connected {
  readonly client: ClientName
  /** What `createLocks({ redis })` takes: one client, or one per node of a quorum. */
  readonly redis: RedisClient | RedisClient[]
  /** The nodes to SCAN: every node of a quorum, every master of a cluster. */
  scanNodes(): Promise<ScanNode[]>
  close(): Promise<void>
}

/** One node's client, opened. */
export interface Opened {
  raw: RedisClient
  node: ScanNode
  close(): Promise<void>
}
