export { createLocks, type Locks, type LocksOptions, type AcquireOptions } from './locks.js'
export { Lease } from './lease.js'
export type { LockInfo } from './backend.js'
export { claimFence, fencedSet, type FencedSetOptions } from './fenced.js'
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
  type NodeVote,
  type FencelockErrorCode,
  type LockLostReason,
} from './errors.js'
