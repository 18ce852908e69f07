// The nemesis at work: one planned fault applied to the run's workers, Redis nodes or proxies,
// with its start and end in the history.
import type { ServerClock } from '../harness/faketime.js'
import type { FaultProxy } from '../harness/fault-proxy.js'
import type { RedisProcess } from '../harness/redis-server.js'
import { stepClock } from './clock-faults.js'
import { workerName, type BankResource } from './config.js'
import type { FaultEvent, HistoryWriter } from './history.js'
import type { Holders } from './holders.js'
import type { PlannedFault } from './nemesis.js'
import type { Slot, WorkerSlots } from './worker-slots.js'

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)))

/** What a fault can hit, and where it is written down. */
export interface FaultTargets {
  ttl: number
  now: () => number
  history: HistoryWriter
  resources: BankResource[]
  holders: Holders
  workers: WorkerSlots
  redisNodes: RedisProcess[]
  proxies: FaultProxy[]
  /** The nodes' clocks when they run under libfaketime (clock faults on), else empty. */
  clocks: ServerClock[]
}

function recordFault(t: FaultTargets, f: PlannedFault, phase: 'start' | 'end', target: string, detail?: string): void {
  const event: FaultEvent = { kind: 'fault', phase, fault: f.kind, target, id: f.id, time: t.now(), ...(detail ? { detail } : {}) }
  t.history.add(event)
}

function workerTarget(t: FaultTargets, f: PlannedFault): { slot: Slot; deadline: number | undefined } {
  const slots = t.workers.slots
  // Prefer whoever holds the lock right now: pausing or killing a holder is what tests fencing.
  const holder = t.holders.get(t.resources[f.resource]!.name) ?? t.holders.values().find((h) => h.read && slots[h.slot]?.child)
  const bySlot = holder && slots[holder.slot]?.child ? slots[holder.slot] : undefined
  const fallback = slots.find((s, i) => i >= f.index && s.child) ?? slots.find((s) => s.child)
  return { slot: (bySlot ?? fallback ?? slots[0])!, deadline: bySlot ? holder?.deadline : undefined }
}

async function pauseWorker(t: FaultTargets, f: PlannedFault): Promise<void> {
  // Catch the holder between its read and its write (up to 300 ms): a pause there is the
  // one that makes an unfenced run lose an update, so the control run reliably shows it.
  // Under load a holder can be between leases for a while: wait up to two ttls for one that
  // has read (any resource when the planned one has none), so that the pause hits a lease
  // and not an idle waiter, whatever the machine's speed.
  const name = t.resources[f.resource]!.name
  const reading = () => t.holders.get(name)?.read || t.holders.values().some((h) => h.read)
  for (let waited = 0; waited < 300 && !t.holders.get(name)?.read; waited += 2) await sleep(2)
  for (let waited = 0; waited < t.ttl * 2 && !reading(); waited += 2) await sleep(2)
  const { slot, deadline } = workerTarget(t, f)
  const child = slot.child
  if (!child) return
  const target = workerName(slot.slot)
  child.kill('SIGSTOP')
  slot.paused = true
  // Just past the deadline: the next holder is most likely between its read and its write.
  const duration = f.justPast && deadline !== undefined ? Math.max(20, deadline - t.now()) + f.delayMs : f.duration
  recordFault(
    t,
    f,
    'start',
    target,
    `pid ${child.pid}${deadline === undefined ? ' (holds no lease)' : ''}, ${Math.round(duration)} ms${f.justPast && deadline !== undefined ? `, until ${f.delayMs} ms past its lease's deadline` : ''}`,
  )
  await sleep(duration)
  child.kill('SIGCONT')
  slot.paused = false
  recordFault(t, f, 'end', target)
}

async function killWorker(t: FaultTargets, f: PlannedFault): Promise<void> {
  const { slot } = workerTarget(t, f)
  const child = slot.child
  if (!child) return
  const target = workerName(slot.slot)
  t.workers.killing(child)
  child.kill('SIGCONT')
  child.kill('SIGKILL')
  recordFault(t, f, 'start', target, `pid ${child.pid}, respawn after ${f.duration} ms`)
  await sleep(f.duration)
  slot.generation++
  if (!t.workers.stopping) t.workers.spawn(slot)
  recordFault(t, f, 'end', target)
}

async function killRedis(t: FaultTargets, f: PlannedFault): Promise<void> {
  const node = t.redisNodes[f.index]!
  recordFault(t, f, 'start', `redis${f.index}`, `restart empty after ${f.duration} ms`)
  await node.kill9()
  await sleep(f.duration)
  await node.restart()
  recordFault(t, f, 'end', `redis${f.index}`)
}

/** A partition or a delay at the node's proxy, healed after the fault's duration. */
async function proxyFault(t: FaultTargets, f: PlannedFault): Promise<void> {
  const proxy = t.proxies[f.index]!
  if (f.kind === 'partition') {
    proxy.partition()
    recordFault(t, f, 'start', `redis${f.index}`, `${f.duration} ms`)
  } else {
    proxy.setDelay(f.delayMs)
    recordFault(t, f, 'start', `redis${f.index}`, `+${f.delayMs} ms each way for ${f.duration} ms`)
  }
  await sleep(f.duration)
  proxy.heal()
  recordFault(t, f, 'end', `redis${f.index}`)
}

export async function applyFault(t: FaultTargets, f: PlannedFault): Promise<void> {
  switch (f.kind) {
    case 'pause-worker':
      return pauseWorker(t, f)
    case 'kill-worker':
      return killWorker(t, f)
    case 'kill-redis':
      return killRedis(t, f)
    case 'partition':
    case 'delay':
      return proxyFault(t, f)
    case 'clock':
      return stepClock(t, f)
    case 'script-flush': {
      recordFault(t, f, 'start', `redis${f.index}`)
      await t.redisNodes[f.index]!.cli('SCRIPT', 'FLUSH').catch(() => '')
      recordFault(t, f, 'end', `redis${f.index}`)
      return
    }
    case 'failover-kill':
    case 'failover-pause':
    case 'failover-isolate':
    case 'failover-stale-replica':
      throw new Error('applyFault: a failover is applied by applyFailover (failover mode)')
    case 'reconnect': {
      recordFault(t, f, 'start', `redis${f.index}`, `${t.proxies[f.index]!.connections()} connections reset`)
      t.proxies[f.index]!.resetAll()
      recordFault(t, f, 'end', `redis${f.index}`)
      return
    }
  }
}
