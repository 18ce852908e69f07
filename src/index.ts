/**
 * Distributed locks on Redis with fencing tokens, lease-loss signals and event-driven waiting.
 *
 * Start with {@link createLocks}: it takes an ioredis, iovalkey or node-redis client (or an array
 * of clients of independent masters for quorum mode) and returns {@link Locks}. Every acquisition
 * hands back a {@link Lease} whose `fence` strictly increases per resource and whose `signal`
 * aborts with {@link LockLostError} when the lease can no longer be trusted; {@link fencedSet}
 * and {@link claimFence} make a Redis key refuse a stale fence. Every failure is a
 * {@link FencelockError} with a stable `code`.
 *
 * @packageDocumentation
 * @module fencelock
 */
export { createLocks, type Locks, type LocksOptions, type AcquireOptions, type TryAcquireOptions, type CloseOptions } from './api/locks.js'
export type { QuorumOptions } from './topology/quorum/options.js'
export type { ReplicasOptions } from './topology/replicated.js'
export type { Lease, LeaseRisk } from './runtime/lease.js'
export type { HolderInfo, LockInfo } from './topology/backend.js'
export type { PermitHolder, PermitOptions, Semaphore, SemaphoreOptions, SemaphoreInfo, TryPermitOptions } from './primitives/semaphore/handle.js'
export type { CampaignOptions, Election, ElectionInfo, ElectionOptions, Leader, LeaderInfo, Term } from './primitives/election/handle.js'
export type { ReadWriteHolder, ReadWriteLock, ReadWriteInfo } from './primitives/rw-lock/handle.js'
export type { MultiLease } from './primitives/multi/handle.js'
export { claimFence, fencedSet, type FencedSetOptions } from './guards/fenced.js'
export type { RedisClient, IORedisClient, NodeRedisClient, NodeRedisCluster, NodeRedisSentinel, GlideClient } from './redis/client-types.js'
export { parseDuration, type ParseDurationOptions } from './util/duration.js'
export {
  telemetry,
  type Telemetry,
  type TelemetryChannel,
  type TelemetryEvents,
  type LockKind,
  type WakeReason,
  type AcquireStartEvent,
  type AcquireEvent,
  type ExtendEvent,
  type LostEvent,
  type ReleaseEvent,
  type AtRiskEvent,
  type FencedWriteEvent,
} from './util/telemetry.js'
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
  ServerVersionError,
  MissingDependencyError,
  LockReentryError,
  KeyTypeError,
  type NodeVote,
  type FencelockErrorCode,
  type LockLostReason,
} from './errors/errors.js'
