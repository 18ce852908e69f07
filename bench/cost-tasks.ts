// The worker side of the cost scenarios (bench/worker.ts hands these tasks over): H (the handoff
// floor: a pub/sub wake-up plus one round trip between two processes), K (uncontended cost over
// many resources) and M (Redis memory per resource locked once, and per resource held).
import { Redis } from 'ioredis'
import { openLib, type LibSpec, type LockLib } from './libs.js'
import { clock, percentile } from './stats.js'
import { wireCount } from './wire.js'

export type CostTask =
  | { type: 'floor-listen'; url: string; channel: string; ackKey: string }
  | { type: 'floor-publish'; url: string; channel: string; ackKey: string; n: number }
  | { type: 'floor-collect'; warmup: number }
  | { type: 'ring-join'; url: string; prefix: string; index: number; procs: number; hops: number; doneKey: string }
  | { type: 'ring-start'; url: string; prefix: string; doneKey: string; timeoutS: number }
  | { type: 'ring-collect'; warmup: number }
  | { type: 'keyspace-open'; lib: LibSpec; urls: string[]; names: number; prefix: string; fill: boolean; concurrency: number; warmup: number }
  | { type: 'keyspace-run'; n: number }
  | { type: 'touch'; lib: LibSpec; urls: string[]; from: number; to: number; concurrency: number; prefix: string; hold?: boolean }

const open: Redis[] = []

async function connect(url: string): Promise<Redis> {
  const c = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 })
  await c.connect()
  open.push(c)
  return c
}

async function closeAll(): Promise<void> {
  const all = open.splice(0)
  await Promise.all(all.map((c) => c.quit().catch(() => c.disconnect())))
}

// ------------------------------------------------------------------ H

let listener: { samples: number[]; errors: string[] } | undefined

/**
 * Process Q of the floor: subscribed to `channel` on one connection; on each message (the
 * publisher's clock when it sent PUBLISH) it sends one GET on its other connection and records
 * the time from PUBLISH sent to that reply, then acknowledges (RPUSH, not timed) so that only one
 * message is ever in flight.
 */
async function floorListen(task: Extract<CostTask, { type: 'floor-listen' }>) {
  const sub = await connect(task.url)
  const cmd = await connect(task.url)
  const state = { samples: [] as number[], errors: [] as string[] }
  listener = state
  sub.on('message', (_channel: string, message: string) => {
    const sent = Number(message)
    cmd.get('floor:value').then(
      () => {
        state.samples.push(clock() - sent)
        return cmd.rpush(task.ackKey, '1')
      },
      (err: unknown) => {
        if (state.errors.length < 3) state.errors.push(String(err))
        return cmd.rpush(task.ackKey, '1')
      },
    )
  })
  await sub.subscribe(task.channel)
  return {}
}

/** Process P of the floor: PUBLISH the current clock, wait for Q's acknowledgement, again. */
async function floorPublish(task: Extract<CostTask, { type: 'floor-publish' }>) {
  const pub = await connect(task.url)
  const ack = await connect(task.url)
  let missed = 0
  for (let i = 0; i < task.n; i++) {
    await pub.publish(task.channel, String(clock()))
    const got = await ack.blpop(task.ackKey, 1)
    if (!got) missed++
  }
  await closeAll()
  return { missed }
}

async function floorCollect(task: Extract<CostTask, { type: 'floor-collect' }>) {
  const state = listener
  if (!state) throw new Error('floor-collect before floor-listen')
  listener = undefined
  await closeAll()
  const samples = state.samples.slice(task.warmup)
  return { n: samples.length, p50: percentile(samples, 50), p99: percentile(samples, 99), max: percentile(samples, 100), errors: state.errors }
}

/** This process's member of a ring (see ringJoin): the samples it took. */
let ringMember: { samples: number[]; errors: string[] } | undefined

/**
 * One of `procs` processes of the ring floor, all alive and subscribed as a lock's waiters are:
 * subscribed to its own channel; on each message (the sender's clock and a hop count) it sends
 * one GET on its other connection and records PUBLISH sent -> GET answered, as H does, then
 * publishes to the next member (its own clock, the hop count + 1). One message is in flight at a
 * time and every hop wakes another process, as every handoff of C does; the last hop ends the
 * ring (RPUSH `doneKey`).
 */
async function ringJoin(task: Extract<CostTask, { type: 'ring-join' }>) {
  const sub = await connect(task.url)
  const cmd = await connect(task.url)
  const state = { samples: [] as number[], errors: [] as string[] }
  ringMember = state
  const next = `${task.prefix}:${(task.index + 1) % task.procs}`
  sub.on('message', (_channel: string, message: string) => {
    const space = message.indexOf(' ')
    const sent = Number(message.slice(0, space))
    const hop = Number(message.slice(space + 1))
    const pass = () => (hop + 1 < task.hops ? cmd.publish(next, `${clock()} ${hop + 1}`) : cmd.rpush(task.doneKey, '1'))
    cmd.get('floor:value').then(
      () => {
        state.samples.push(clock() - sent)
        return pass()
      },
      (err: unknown) => {
        if (state.errors.length < 3) state.errors.push(String(err))
        return pass()
      },
    )
  })
  await sub.subscribe(`${task.prefix}:${task.index}`)
  return {}
}

/** Sends the ring's first message (to member 0) and waits for its last hop; missed: 1 if it never came. */
async function ringStart(task: Extract<CostTask, { type: 'ring-start' }>) {
  const pub = await connect(task.url)
  const done = await connect(task.url)
  await pub.publish(`${task.prefix}:0`, `${clock()} 0`)
  const got = await done.blpop(task.doneKey, task.timeoutS)
  return { missed: got ? 0 : 1 }
}

async function ringCollect(task: Extract<CostTask, { type: 'ring-collect' }>) {
  const state = ringMember
  if (!state) throw new Error('ring-collect before ring-join')
  ringMember = undefined
  await closeAll()
  return { samples: state.samples.slice(task.warmup), errors: state.errors }
}

// ------------------------------------------------------------------ K

let keyspace: { lib: LockLib; names: number; prefix: string; next: number } | undefined

const name = (prefix: string, i: number) => `${prefix}:${i}`

/** `n` acquire+release cycles of distinct names from..to-1, `concurrency` at a time. */
async function cycleAll(lib: LockLib, prefix: string, from: number, to: number, concurrency: number): Promise<void> {
  let next = from
  await Promise.all(
    Array.from({ length: Math.min(concurrency, to - from) }, async () => {
      while (next < to) {
        const held = await lib.acquire(name(prefix, next++), 10_000, 10_000)
        await held.release()
      }
    }),
  )
}

/** How long a held resource of M stays locked: past the measurement, which follows at once. */
const HOLD_TTL = 300_000

async function holdAll(lib: LockLib, prefix: string, from: number, to: number, concurrency: number): Promise<void> {
  let next = from
  await Promise.all(
    Array.from({ length: Math.min(concurrency, to - from) }, async () => {
      while (next < to) await lib.acquire(name(prefix, next++), HOLD_TTL, 10_000)
    }),
  )
}

/**
 * Opens the library and, with `fill`, locks every one of the `names` resources once (so Redis holds
 * what it keeps per resource, e.g. fencelock's fence keys), `concurrency` at a time; else a warm-up.
 */
async function keyspaceOpen(task: Extract<CostTask, { type: 'keyspace-open' }>) {
  const lib = openLib(task.lib, [await connect(task.urls[0]!)])
  const began = clock()
  if (task.fill) await cycleAll(lib, task.prefix, 0, task.names, task.concurrency)
  // The same warm-up (JIT, script cache) for every library and size, on the measured names.
  for (let i = 0; i < task.warmup; i++) await (await lib.acquire(name(task.prefix, i % task.names), 10_000, 5_000)).release()
  keyspace = { lib, names: task.names, prefix: task.prefix, next: task.warmup }
  return { fillSeconds: (clock() - began) / 1000 }
}

/** Sequential acquire+release, cycling over the resources (as A does, one at a time). */
async function keyspaceRun(task: Extract<CostTask, { type: 'keyspace-run' }>) {
  const ks = keyspace
  if (!ks) throw new Error('keyspace-run before keyspace-open')
  keyspace = undefined
  const acquire: number[] = []
  const release: number[] = []
  const wire0 = wireCount()
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < task.n; i++) {
    const a = performance.now()
    const held = await ks.lib.acquire(name(ks.prefix, (ks.next + i) % ks.names), 10_000, 5_000)
    const b = performance.now()
    acquire.push(b - a)
    await held.release()
    release.push(performance.now() - b)
  }
  const elapsed = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  const wire = wireCount() - wire0
  await ks.lib.close()
  await closeAll()
  return {
    cyclesPerSec: (task.n / elapsed) * 1000,
    usPerCycle: (elapsed * 1000) / task.n,
    acquireP50: percentile(acquire, 50),
    acquireP99: percentile(acquire, 99),
    releaseP50: percentile(release, 50),
    releaseP99: percentile(release, 99),
    clientCpuUsPerCycle: (cpu.user + cpu.system) / task.n,
    wirePerCycle: wire / task.n,
  }
}

// ------------------------------------------------------------------ M

/**
 * Locks resources from..to-1 once each (acquire + release), `concurrency` at a time on one
 * connection; with `hold`, acquires each and keeps it (closed without releasing, the locks stay in
 * Redis for HOLD_TTL), so that Redis holds what it keeps per held resource.
 */
async function touch(task: Extract<CostTask, { type: 'touch' }>) {
  const lib = openLib(task.lib, [await connect(task.urls[0]!)])
  const began = clock()
  if (task.hold) await holdAll(lib, task.prefix, task.from, task.to, task.concurrency)
  else await cycleAll(lib, task.prefix, task.from, task.to, task.concurrency)
  const seconds = (clock() - began) / 1000
  await lib.close()
  await closeAll()
  return { seconds }
}

export async function costTask(task: CostTask): Promise<unknown> {
  switch (task.type) {
    case 'floor-listen':
      return floorListen(task)
    case 'floor-publish':
      return floorPublish(task)
    case 'floor-collect':
      return floorCollect(task)
    case 'ring-join':
      return ringJoin(task)
    case 'ring-start':
      return ringStart(task)
    case 'ring-collect':
      return ringCollect(task)
    case 'keyspace-open':
      return keyspaceOpen(task)
    case 'keyspace-run':
      return keyspaceRun(task)
    case 'touch':
      return touch(task)
  }
}
