// Failover mode's fault: a grant the replica misses, the primary killed -9 (or paused) right after
// it, the holder frozen through the promotion, the old primary back as a replica. Real processes
// throughout: redis-server, its replica, three Sentinels, the worker.
import type { RedisProcess } from '../harness/redis-server.js'
import { HARNESS_AUTH, workerUser, type SentinelGroup } from '../harness/sentinel.js'
import { workerName } from './config.js'
import type { FaultEvent, OpEvent } from './history.js'
import type { PlannedFault } from './nemesis.js'
import type { FaultTargets } from './apply-fault.js'
import type { Slot } from './worker-slots.js'

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)))

function note(t: FaultTargets, f: PlannedFault, phase: 'start' | 'end', target: string, detail: string): void {
  const event: FaultEvent = { kind: 'fault', phase, fault: f.kind, target, id: f.id, time: t.now(), detail }
  t.history.add(event)
}

const nodeName = (group: SentinelGroup, node: RedisProcess) => `redis${group.nodes.indexOf(node)}`

/**
 * The first acquisition both asked for and granted after `since` (one asked for before may have
 * been replicated already), waited for up to `ms`; none when the guarded run's WAIT refused them all.
 */
async function grantAfter(t: FaultTargets, since: number, ms: number): Promise<OpEvent | undefined> {
  const deadline = performance.now() + ms
  const asked = new Map<string, number>()
  let seen = 0
  while (performance.now() < deadline) {
    const events = t.history.events
    for (; seen < events.length; seen++) {
      const e = events[seen]!
      if (e.kind !== 'op' || e.f !== 'acquire') continue
      const key = `${e.pid}|${e.resource}`
      if (e.type === 'invoke') asked.set(key, e.time)
      else if (e.type === 'ok' && e.time > since && (asked.get(key) ?? 0) > since) return e
    }
    await sleep(2)
  }
  return undefined
}

/** The holder to freeze: the one of the grant the replica missed, else whoever holds a lock now. */
function holderSlot(t: FaultTargets, f: PlannedFault, grant: OpEvent | undefined): Slot | undefined {
  const slots = t.workers.slots
  const slot = grant ? Number(grant.worker.slice(1)) : (t.holders.get(t.resources[f.resource]!.name) ?? t.holders.values()[0])?.slot
  return slot === undefined ? undefined : slots[slot]?.child ? slots[slot] : undefined
}

/** SIGSTOP (or SIGCONT) of a holder's worker process, marked in its slot. */
function setFrozen(slot: Slot | undefined, frozen: boolean): void {
  if (!slot) return
  slot.child?.kill(frozen ? 'SIGSTOP' : 'SIGCONT')
  slot.paused = frozen
}

/** The old primary replicating from the new one: Sentinel does this itself, but only 8 to 18 s later, so the harness sends what it would. */
async function rejoin(group: SentinelGroup, old: RedisProcess, primary: RedisProcess): Promise<void> {
  await old.cli('REPLICAOF', primary.host, String(primary.port)).catch(() => '')
  await group.waitForReplica(old)
}

/**
 * 1. SIGSTOP the replica and cut its link (CLIENT KILL TYPE replica on the primary). 2. Wait (up to `delayMs`) for a lock granted on
 * the primary after that: without `replicas` it is granted and the replica lacks it and its fence;
 * with `replicas: 1` WAIT refuses it. 3. Kill the primary with -9 (or SIGSTOP it), SIGSTOP that
 * holder (or any holder), SIGCONT the replica. 4. Sentinel promotes the replica. 5. The old
 * primary restarts empty (or resumes) and replicates from the new one. 6. The holder resumes, half a
 * ttl after the promotion: a waiter has had the time to be granted the lock on the new primary.
 */
export async function applyFailover(t: FaultTargets, group: SentinelGroup, f: PlannedFault): Promise<void> {
  if (f.kind === 'failover-isolate') return isolatePrimary(t, group, f)
  if (f.kind === 'failover-stale-replica') return promoteStaleReplica(t, group, f)
  const primary = await group.primary()
  const replica = await group.replica()
  const started = t.now()
  replica.pause()
  // A paused replica still receives the stream into its socket buffer and applies it on SIGCONT:
  // cut the link, so what the primary grants from now on reaches the replica only if it reconnects.
  await primary.cli('CLIENT', 'KILL', 'TYPE', 'replica').catch(() => '')
  const grant = await grantAfter(t, t.now(), f.delayMs)
  if (f.kind === 'failover-kill') await primary.kill9()
  else primary.pause()
  const slot = holderSlot(t, f, grant)
  setFrozen(slot, true)
  replica.resume()
  const how = f.kind === 'failover-kill' ? 'killed -9' : 'paused'
  const held = grant ? `${grant.worker} granted ${grant.resource} fence ${grant.fence} while the replica was paused` : 'no grant while the replica was paused'
  note(t, f, 'start', nodeName(group, primary), `primary ${how}; ${held}; ${slot ? `${workerName(slot.slot)} frozen` : 'no holder frozen'}`)
  const promoted = await group.waitForPromotion(primary)
  const promotedAt = t.now()
  if (f.kind === 'failover-kill') await primary.restart()
  else primary.resume()
  await rejoin(group, primary, promoted)
  await sleep(promotedAt + t.ttl / 2 - t.now())
  setFrozen(slot, false)
  note(
    t,
    f,
    'end',
    nodeName(group, primary),
    `${nodeName(group, promoted)} promoted after ${Math.round(promotedAt - started)} ms; ${nodeName(group, primary)} rejoined as its replica`,
  )
}

/** The worker kept with the isolated primary: an ioredis one (even slot: it stays where it is connected), a holder if one holds. */
function isolatedSlot(t: FaultTargets): Slot | undefined {
  const live = t.workers.slots.filter((s) => s.slot % 2 === 0 && s.child !== undefined)
  return live.find((s) => t.holders.values().some((h) => h.slot === s.slot)) ?? live[0]
}

/** `ACL SETUSER` of each of `users` on `node` (as the harness's own user), and their connections cut when turned off. */
async function setUsers(node: RedisProcess, users: string[], state: 'on' | 'off'): Promise<void> {
  for (const user of users) {
    await node.cli(...HARNESS_AUTH, 'ACL', 'SETUSER', user, state)
    if (state === 'off') await node.cli(...HARNESS_AUTH, 'CLIENT', 'KILL', 'USER', user).catch(() => '')
  }
}

/**
 * A partition that leaves the primary with one client: the primary turns off every Redis user but
 * that worker's (the Sentinels', the replica's link and every other worker's connections are cut,
 * and their reconnections refused), so the Sentinels see it down and promote the replica, while the
 * kept worker goes on talking to the old primary. With `replicas: 1` its grants there fail (no
 * replica acknowledges them); without, it and the others can hold one lock at once. After a ttl
 * the users are turned on again and the old primary rejoins as the new one's replica.
 */
async function isolatePrimary(t: FaultTargets, group: SentinelGroup, f: PlannedFault): Promise<void> {
  const primary = await group.primary()
  const started = t.now()
  const slot = isolatedSlot(t)
  const kept = slot ? workerUser(slot.slot) : undefined
  const cut = ['default', ...t.workers.slots.map((s) => workerUser(s.slot)).filter((u) => u !== kept)]
  await setUsers(primary, cut, 'off')
  await primary.cli(...HARNESS_AUTH, 'CLIENT', 'KILL', 'TYPE', 'replica').catch(() => '')
  note(t, f, 'start', nodeName(group, primary), `primary cut off from the Sentinels, its replica and every client but ${slot ? workerName(slot.slot) : 'none'}`)
  const promoted = await group.waitForPromotion(primary)
  const promotedAt = t.now()
  await sleep(promotedAt + t.ttl - t.now())
  await setUsers(primary, cut, 'on')
  await rejoin(group, primary, promoted)
  note(
    t,
    f,
    'end',
    nodeName(group, primary),
    `${nodeName(group, promoted)} promoted after ${Math.round(promotedAt - started)} ms; the partition healed a ttl later, ${nodeName(group, primary)} rejoined as its replica`,
  )
}

/** The address the primary sees `replica`'s link come from (`laddr` of its master connection), to cut that link alone. */
async function linkAddress(replica: RedisProcess): Promise<string | undefined> {
  const list = await replica.cli('CLIENT', 'LIST', 'TYPE', 'master').catch(() => '')
  return /laddr=(\S+)/.exec(list)?.[1]
}

/**
 * Two replicas, and WAIT asked for one acknowledgement where a failover may promote either: 1. the
 * stale replica (`f.index`) is stopped and its link alone cut, so only the other, the acknowledging
 * one, receives what is granted from now on. 2. A lock granted then (up to `delayMs`): with
 * `replicas: 1` WAIT counts the acknowledging replica and grants it; with `replicas: 2` WAIT refuses
 * it. 3. That holder is frozen, the acknowledging replica stopped, and once every Sentinel counts it
 * down the primary is killed -9 and the stale replica resumed: the only replica a failover can
 * choose is the one that lacks the grant. 4. It is promoted. 5. The acknowledging replica resumes
 * and the old primary restarts empty; both replicate from the new primary. 6. The holder resumes
 * half a ttl after the promotion.
 */
async function promoteStaleReplica(t: FaultTargets, group: SentinelGroup, f: PlannedFault): Promise<void> {
  const primary = await group.primary()
  const replicas = await group.replicas()
  if (replicas.length !== 2) throw new Error(`failover-stale-replica: needs two replicas, the group has ${replicas.length}`)
  const stale = replicas[f.index % 2]!
  const acker = replicas[(f.index + 1) % 2]!
  const started = t.now()
  const addr = await linkAddress(stale)
  stale.pause()
  if (addr) await primary.cli('CLIENT', 'KILL', 'ADDR', addr).catch(() => '')
  const grant = await grantAfter(t, t.now(), f.delayMs)
  // Frozen at once, while it holds the lock: the Sentinels take two seconds to count the acker down.
  const slot = holderSlot(t, f, grant)
  setFrozen(slot, true)
  acker.pause()
  await group.waitForReplicaDown(acker)
  await primary.kill9()
  stale.resume()
  const held = grant
    ? `${grant.worker} granted ${grant.resource} fence ${grant.fence}, acknowledged by ${nodeName(group, acker)} only`
    : `no grant while ${nodeName(group, stale)} was cut off`
  note(
    t,
    f,
    'start',
    nodeName(group, primary),
    `${addr ? '' : 'no link address found; '}${nodeName(group, stale)} cut off, ${nodeName(group, acker)} stopped, primary killed -9; ${held}; ${slot ? `${workerName(slot.slot)} frozen` : 'no holder frozen'}`,
  )
  const promoted = await group.waitForPromotion(primary)
  const promotedAt = t.now()
  acker.resume()
  // Told first, waited for last: it full-syncs while the old primary restarts.
  await acker.cli('REPLICAOF', promoted.host, String(promoted.port)).catch(() => '')
  await primary.restart()
  await rejoin(group, primary, promoted)
  await group.waitForReplica(acker)
  await sleep(promotedAt + t.ttl / 2 - t.now())
  setFrozen(slot, false)
  note(
    t,
    f,
    'end',
    nodeName(group, primary),
    `${nodeName(group, promoted)} promoted after ${Math.round(promotedAt - started)} ms${promoted === stale ? ' (the replica that missed the grant)' : ''}; ${nodeName(group, acker)} and ${nodeName(group, primary)} rejoined as its replicas`,
  )
}
