import { KeyedPrimitive } from '../keyed.js'
import type { Exec, ReplyOf } from '../../lua/binding.js'
import type { Into } from '../../util/into.js'
import { electionAcquire, electionConfirm, electionExtend, electionInspect, electionLeave, electionRelease } from '../../lua/embedded.js'
import type { AttemptRequest, NodeGrant, Primitive, Released } from '../../topology/primitive.js'
import type { HolderInfo } from '../../topology/backend.js'
import { decodeRelease, isOne, mergeHolder, readLockValue, toNumber, grantOf } from '../decode.js'

// An election is a fair mutex whose holder also keeps a value and tells observers of every change.
// The runtime knows operations on a resource name only, so what a call carries beyond the name
// rides in it: a campaign runs on `campaignName(name, value)`, a proclamation extends
// `proclaimName(name, value, version)`; renewals (on the campaign's name) leave the value alone.
// Every topology then runs an election as it runs any primitive: no runtime or topology code of
// its own, and a proclaim reaches a majority (quorum) or the replicas (WAIT) as an extension does.

export interface ElectionOptions {
  prefix: string
  /** How long the fence key outlives its last use (ms). */
  fenceRetention: number
  /** How long past its next re-check a queued candidate keeps its place (ms). */
  waiterGrace: number
  /** The label each lease records beside its token (see `HolderInfo`): `createLocks`' `holder`. */
  holder: string
}

/** What a resource name of the election primitive carries. */
interface Call {
  readonly name: string
  readonly value: string
  /** A proclamation's number in its term; absent for a campaign (and its renewals). */
  readonly version?: number
}

export const campaignName = (name: string, value: string): string => JSON.stringify([name, value])
export const proclaimName = (name: string, value: string, version: number): string => JSON.stringify([name, value, version])

function parseCall(resource: string): Call {
  const [name, value, version] = JSON.parse(resource) as [string, string, number?]
  return version === undefined ? { name, value } : { name, value, version }
}

/** The keys of one election: the hash tag `{name}`, then `:E:` so that no other kind shares them. */
export interface ElectionKeys {
  readonly lock: string
  readonly fence: string
  readonly queue: string
  readonly queueExpiry: string
  readonly term: string
  /** Prefix of the candidates' wake-up channels (an instance id is appended). */
  readonly wake: string
  /** The channel observers listen on. */
  readonly observers: string
}

export function electionKeys(prefix: string, name: string): ElectionKeys {
  const base = `${prefix}{${name}}:E:`
  return { lock: `${base}L`, fence: `${base}F`, queue: `${base}Q`, queueExpiry: `${base}X`, term: `${base}T`, wake: `${base}W`, observers: `${base}O` }
}

interface Keys extends ElectionKeys {
  readonly call: Call
  readonly all: readonly [lock: string, fence: string, queue: string, queueExpiry: string, term: string]
  readonly line: readonly [lock: string, queue: string, queueExpiry: string]
  readonly channels: readonly [string]
}

function keysWithLists(prefix: string, resource: string): Keys {
  const call = parseCall(resource)
  const k = electionKeys(prefix, call.name)
  // Named fields, not `{ ...k }`: V8 copies a spread through a slow generic path (see mutex.ts).
  const { lock, fence, queue, queueExpiry, term, wake, observers } = k
  return {
    lock,
    fence,
    queue,
    queueExpiry,
    term,
    wake,
    observers,
    call,
    all: [k.lock, k.fence, k.queue, k.queueExpiry, k.term],
    line: [k.lock, k.queue, k.queueExpiry],
    channels: [k.wake],
  }
}

/** What election-inspect.lua answers on one node. */
export type ElectionView = ReplyOf<typeof electionInspect>

/** The leader as `election.leader()` reports it. */
export interface Leader {
  /** What the leader campaigned with, or last proclaimed. */
  readonly value: string
  /** The leader's term: its lease's fence, strictly larger than every earlier term's. */
  readonly fence: number
  /** How many times the leader proclaimed a new value in this term (0: its campaign's value). */
  readonly version: number
  /** Remaining ttl of the term in ms, as Redis counts it (the leader renews it while it leads). */
  readonly ttl: number
}

/** The leader as `election.inspect()` and `election.leader()` report it: its term, and who holds it since when (see `HolderInfo`). */
export interface LeaderInfo extends Leader, HolderInfo {}

/** What `election.inspect()` shows: the leader, the last term handed out, the candidates in line. */
export interface ElectionInfo {
  /** The election's name. */
  readonly name: string
  /** The leader (on a quorum: the one a majority holds), or null when vacant. */
  readonly leader: LeaderInfo | null
  /** The leader's lease token (what `election.revoke(token)` names), or null when vacant. */
  readonly token: string | null
  /** The last fence handed out for this election (on a quorum: the largest any node recorded), or null. */
  readonly fence: number | null
  /** Candidates queued in Redis (one per campaigning process). */
  readonly candidates: number
  /** A majority holds a new term whose fence is not settled yet (quorum mode, for a moment): `leader` is null meanwhile. */
  readonly settling: boolean
}

/**
 * The nodes' views as one: the leader is the token that holds the lock on a majority; its ttl is
 * how long a majority still has it; its term and value are the newest that those nodes recorded
 * (a proclamation that reached only some of them is the leader's own latest word).
 */
export function mergeElection(resource: string, views: readonly ElectionView[], majority: number): ElectionInfo {
  const name = parseCall(resource).name
  const byHolder = new Map<string, ElectionView[]>()
  for (const view of views) {
    if (typeof view[0] !== 'string') continue
    const token = readLockValue(view[0]).token
    byHolder.set(token, [...(byHolder.get(token) ?? []), view])
  }
  const held = [...byHolder.values()].find((list) => list.length >= majority)
  const fences = views.flatMap((v) => (v[2] == null ? [] : [toNumber(v[2])]))
  const candidates = Math.max(0, ...views.map((v) => toNumber(v[3])))
  const leader = held ? leaderOf(held, majority) : null
  const token = held && leader ? readLockValue(held[0]![0]).token : null
  return { name, leader, token, fence: fences.length > 0 ? Math.max(...fences) : null, candidates, settling: held !== undefined && leader === null }
}

function leaderOf(views: readonly ElectionView[], majority: number): LeaderInfo | null {
  const terms = views.filter((v) => v[4] != null)
  if (terms.length === 0) return null // granted, not confirmed yet: no term has been announced
  const newest = terms.reduce((a, b) => (toNumber(b[4]) > toNumber(a[4]) || (toNumber(b[4]) === toNumber(a[4]) && toNumber(b[5]) > toNumber(a[5])) ? b : a))
  const ttl = views.map((v) => toNumber(v[1])).sort((a, b) => b - a)[majority - 1]!
  const holder = mergeHolder(
    views.map((v) => readLockValue(v[0])),
    majority,
  )
  return { value: String(newest[6]), fence: toNumber(newest[4]), version: toNumber(newest[5]), ttl: Math.max(0, ttl), ...holder }
}

/** A fair election: a campaign is one script call per node, as a mutex's acquire. */
export class ElectionPrimitive extends KeyedPrimitive<Keys> implements Primitive<ElectionView, ElectionInfo> {
  readonly kind = 'election'
  readonly merge = mergeElection

  constructor(options: ElectionOptions) {
    super(options, keysWithLists)
  }

  acquire(exec: Exec, resource: string, { token, ttl, waiter, score = '', maxTtl }: AttemptRequest, into: Into<NodeGrant>): void {
    const k = this.keysOf(resource)
    const args = [token, ttl, this.retention, waiter, this.grace, score, maxTtl ?? '', k.call.value, k.observers, this.holder] as const
    exec(electionAcquire, k.all, args, (reply): NodeGrant => grantOf(reply, '', maxTtl === undefined ? undefined : 2), into)
  }

  confirm(exec: Exec, resource: string, token: string, fence: number, waiter: string, into: Into<boolean>): void {
    const k = this.keysOf(resource)
    exec(electionConfirm, k.all, [token, fence, this.retention, waiter, k.observers], isOne, into)
  }

  async extend(exec: Exec, resource: string, token: string, ttl: number): Promise<boolean> {
    const k = this.keysOf(resource)
    const { version, value } = k.call
    const args = version === undefined ? ([token, ttl, '', '', k.observers] as const) : ([token, ttl, version, value, k.observers] as const)
    return toNumber(await electionExtend.run(exec, [k.lock, k.term], args)) === 1
  }

  release(exec: Exec, resource: string, token: string, into: Into<Released>): void {
    const k = this.keysOf(resource)
    exec(electionRelease, [k.lock, k.queue, k.queueExpiry, k.term], [token, k.wake, this.grace, k.observers], decodeRelease, into)
  }

  async leave(exec: Exec, resource: string, waiter: string): Promise<void> {
    const k = this.keysOf(resource)
    await electionLeave.run(exec, k.line, [waiter, k.wake, this.grace])
  }

  inspect(exec: Exec, resource: string): Promise<ElectionView> {
    return electionInspect.run(exec, this.keysOf(resource).all, [])
  }
}
