// What the command line asks for: one Command, made by parseCommandLine (args.ts) and run by main.ts.
import type { Kind } from './scan.js'
import type { ClientName } from './values.js'

/** Where and how to reach Redis. The password never appears here (URL or REDIS_PASSWORD). */
export interface Connection {
  /** Redis URLs (redis:// or rediss://): one node, several independent nodes (a quorum), or cluster seeds. */
  redis: string[]
  prefix: string | undefined
  /** The URLs are seeds of one Redis Cluster. */
  cluster: boolean
  /** Client library; undefined: ioredis if installed, else node-redis. */
  client: ClientName | undefined
  /** ACL user (a user in the URL wins). */
  user: string | undefined
  /** Files of PEM certificates and key for TLS. */
  tls: { ca?: string; cert?: string; key?: string }
  /** createLocks' maxTtl (quorum: also how long a restarted node stays out of counting). */
  maxTtl: number | undefined
}

/** What `run` holds while its command runs. */
export type Hold = { kind: 'mutex' } | { kind: 'semaphore'; limit: number } | { kind: 'read' } | { kind: 'write' } | { kind: 'election'; value: string }

export type Command =
  | { name: 'help'; text: string }
  | { name: 'version' }
  | {
      name: 'inspect'
      connection: Connection
      /** One exact name (a mutex unless `kind` says otherwise), or undefined for a listing. */
      resource: string | undefined
      /** What the exact name is: a mutex (one line, as earlier versions printed), a semaphore or a read/write lock (a listing row). */
      kind: Kind
      /** Glob over resource names for a listing; undefined: every held or waited-for one. */
      pattern: string | undefined
      json: boolean
      all: boolean
      watch: boolean
      interval: number
    }
  | { name: 'acquire'; connection: Connection; resource: string; ttl: number | undefined; wait: number | undefined; json: boolean }
  | { name: 'run'; connection: Connection; resource: string; ttl: number | undefined; wait: number | undefined; hold: Hold; command: string[] }
  | { name: 'release'; connection: Connection; resource: string; kind: Kind; token: string | undefined; force: boolean; yes: boolean }
  | { name: 'extend'; connection: Connection; resource: string; token: string; ttl: number | undefined }
  | { name: 'leader'; connection: Connection; election: string; json: boolean; watch: boolean }
