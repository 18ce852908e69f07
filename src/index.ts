export { createLocks, type Locks, type LocksOptions, type AcquireOptions, type TryAcquireOptions, type CloseOptions } from './locks.js'
export type { Lease } from './lease.js'
export type { LockInfo } from './backend.js'
export type { Semaphore, SemaphoreOptions, SemaphoreInfo } from './semaphore.js'
export type { ReadWriteLock, ReadWriteInfo } from './read-write.js'
export type { MultiLease } from './multi-lock.js'
export { claimFence, fencedSet, type FencedSetOptions } from './fenced.js'
export type { RedisClient, IORedisClient, NodeRedisClient, NodeRedisCluster, NodeRedisSentinel } from './redis/client-types.js'
export { parseDuration, type ParseDurationOptions } from './duration.js'
export { events as telemetry } from './telemetry.js'
export {
  FencelockError,
  InvalidArgumentError,
  LockTimeoutError,
  LockLostError,
  LockAbortedError,
  ClosedError,
  RedisError,
  QuorumError,
  ReplicationError,
  LockReentryError,
  type NodeVote,
  type FencelockErrorCode,
  type LockLostReason,
} from './errors.js'
