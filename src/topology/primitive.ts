import type { Exec } from '../lua/binding.js'
import type { Into } from '../util/into.js'

/**
 * What a node says about itself when a topology of several nodes asks (`AttemptRequest.maxTtl`),
 * so that the topology can count it: a node that restarted lost its locks.
 */
export interface NodeFacts {
  /** ms until the node has been up for maxTtl (0: it counts). */
  readonly young: number
  readonly runId: string
  /** The node's TIME in microseconds. */
  readonly now: number
}

/** What one node answered to one acquisition attempt; `node`: its facts, when they were asked for. */
export type NodeGrant =
  /** Granted here; `fence`: this node's fence for it; `claim`: which part was granted (a semaphore's slot; '' for a mutex). */
  | { readonly granted: true; readonly fence: number; readonly claim: string; readonly node?: NodeFacts }
  /** Refused; `retry`: ms until looking again is worth it (the holder's remaining ttl, or the waiter ahead's). */
  | { readonly granted: false; readonly retry: number; readonly refusal?: Error; readonly node?: NodeFacts }

/** What one node answered to one release; `refused`: released, but Redis refused the PUBLISH that wakes the next waiter. */
export interface Released {
  readonly released: boolean
  readonly refused?: string
}

/** One lease of a batched extension. */
export interface ExtendItem {
  readonly resource: string
  readonly token: string
  readonly ttl: number
}

/** One confirmation of a batched `confirm` (`confirmMany`). */
export interface ConfirmItem {
  readonly resource: string
  readonly token: string
  readonly fence: number
  readonly waiter: string
}

/** One waiter of a batched `leave` (`leaveMany`). */
export interface LeaveItem {
  readonly resource: string
  readonly waiter: string
}

/** Where a waiter stands in line after its grant is undone (`Primitive.undo`). */
export interface UndoPlace {
  /** Waiter id, or '' for a single attempt (nothing to put back). */
  readonly waiter: string
  /** Its queue score, the same on every node ('' for the node's time). */
  readonly score: string
  /** The attempt's ttl (ms): the place lives as long as a granted waiter's would (ttl plus the grace) unless it attempts again. */
  readonly ttl: number
}

export interface AttemptRequest {
  readonly token: string
  readonly ttl: number
  /** Waiter id that joins the fair queue if refused, or '' for a single attempt. */
  readonly waiter: string
  /**
   * What a topology of several nodes adds (one node leaves both out). `score`: the waiter's place
   * in line, the same on every node so that all order the waiters alike (absent: the node's time);
   * a waiter granted here then keeps its place until `confirm`, since the grant may be undone (or,
   * where the primitive has `undo`, the undo puts back a place that a grant with nobody in line
   * did not write).
   */
  readonly score?: string
  /** Asks for the node's facts (`NodeGrant.node`): a node up for less than maxTtl ms does not count yet. */
  readonly maxTtl?: number
}

/**
 * One primitive (mutex, semaphore, ...): its key layout, its scripts and the decoding of their
 * replies, on ONE node. It knows nothing of topologies: a topology (single node, node + WAIT,
 * quorum) lends it a node as an `Exec`, passes what it needs through the request (`score`,
 * `maxTtl`) and combines the answers; one acquire script serves every topology. Leases carry the
 * `token` that `acquire` was given, possibly extended by the claim (see `leaseToken`).
 */
export interface Primitive<NodeInfo = unknown, Info = unknown> {
  /** Per-kind part of every key, so that kinds never collide. */
  readonly kind: string
  /** The pub/sub channel prefixes of a resource (a waiter's instance id is appended): one per resource it locks. */
  channel(resource: string): readonly string[]
  /** The token a lease is known by once `claim` was granted (a semaphore's permit names its slot). */
  leaseToken(token: string, claim: string): string
  /** One attempt on this node: its grant (or refusal) goes to `into`, a failure too (no promise made: the hot path). */
  acquire(exec: Exec, resource: string, request: AttemptRequest, into: Into<NodeGrant>): void
  /**
   * Makes a grant final on this node once a topology of several nodes settled on `fence` for it
   * (one node's grant is final as it is): while `token` (a lease token) holds it here, the fence
   * kept here becomes at least `fence`, and `waiter` ('' for none) gives up its place. True (to
   * `into`) if it did.
   */
  confirm(exec: Exec, resource: string, token: string, fence: number, waiter: string, into: Into<boolean>): void
  extend(exec: Exec, resource: string, token: string, ttl: number): Promise<boolean>
  /**
   * `extend` for several leases in ONE script call: one answer per lease, in order. Every
   * resource's keys must be in one Redis Cluster slot (see `routeKey`). Absent: leases are
   * extended one call each.
   */
  extendMany?(exec: Exec, leases: readonly ExtendItem[]): Promise<boolean[]>
  /** A key of `resource` that `extendMany`, `acquireMany` and `releaseMany` touch: its cluster slot is the resource's. */
  routeKey?(resource: string): string
  /** Releases `token`'s grant on this node; the answer goes to `into`, as `acquire`'s does. */
  release(exec: Exec, resource: string, token: string, into: Into<Released>): void
  /**
   * `acquire` for several attempts in ONE script call (group commit, see topology/group.ts): one
   * answer per attempt, in order, each decided exactly as `acquire` would decide it alone (the
   * same Lua function runs for it), or the error that attempt alone met. Every resource's keys
   * must be in one Redis Cluster slot (see `routeKey`). Absent: one call per attempt.
   */
  acquireMany?(exec: Exec, attempts: readonly { readonly resource: string; readonly request: AttemptRequest }[]): Promise<(NodeGrant | Error)[]>
  /** `release` for several leases in ONE script call, as `acquireMany` is for `acquire`. */
  releaseMany?(exec: Exec, leases: readonly { readonly resource: string; readonly token: string }[]): Promise<(Released | Error)[]>
  /** `confirm` for several leases in ONE script call, as `acquireMany` is for `acquire`. */
  confirmMany?(exec: Exec, leases: readonly ConfirmItem[]): Promise<(boolean | Error)[]>
  leave(exec: Exec, resource: string, waiter: string): Promise<void>
  /**
   * Gives back a grant that a topology of several nodes did not settle on (`token`'s lock here is
   * deleted, the line woken if the lock is free), and puts `place.waiter` back in line with its
   * `score` where its acquire took no place (see `AttemptRequest.score`), for as long as a granted
   * waiter's place lives unless it attempts again. Absent: `release`, then `leave` with no waiter (its grants keep the place).
   */
  undo?(exec: Exec, resource: string, token: string, place: UndoPlace): Promise<void>
  /** `leave` for several waiters in ONE script call, as `acquireMany` is for `acquire`: each answer says whether that waiter was in line. */
  leaveMany?(exec: Exec, waiters: readonly LeaveItem[]): Promise<(boolean | Error)[]>
  inspect(exec: Exec, resource: string): Promise<NodeInfo>
  /** Combines the nodes' views (one per node that answered) into what `inspect` shows. */
  merge(resource: string, views: readonly NodeInfo[], majority: number): Info
}

/**
 * `primitive` with some of its calls replaced (group commit, a drop-in's call tracking): the new
 * object's prototype is the primitive, so every call not replaced is the primitive's own, run on
 * it. A primitive is a class instance whose methods live on its prototype: a spread would drop them.
 */
export function replacingCalls<P extends object>(primitive: P, calls: Partial<P>): P {
  return Object.assign(Object.create(primitive) as P, calls)
}
