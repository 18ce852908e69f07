// One run: Redis nodes behind fault proxies, a bank in PostgreSQL, worker processes moving money
// under the lock, the nemesis, and the final state. Everything that happens goes to the history.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { Redis } from 'ioredis'
import { createLocks } from '../src/index.js'
import { startFaultProxy, type FaultProxy } from '../harness/fault-proxy.js'
import { startRedis, type RedisProcess } from '../harness/redis-server.js'
import { workerName, type BankResource, type Primitive, type SqlGuard, type WorkerConfig } from './config.js'
import { HistoryWriter, monotonicNow, now as wallNow, type FaultEvent, type HistoryEvent } from './history.js'
import { planFaults, type PlannedFault } from './nemesis.js'
import type { PgTarget } from './pg-target.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const repoRoot = path.resolve(here, '..')
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)))

export const finalStatePath = (historyPath: string): string => historyPath.replace(/\.jsonl$/, '') + '.final.json'

/** See WorkerConfig.maxTtl: twice the ttl, so a restarted node rejoins the count 2 ttl later. */
export const quorumMaxTtl = (ttl: number): number => ttl * 2

export interface RunOptions {
  /** 'fenced' or 'control' */
  label: string
  /**
   * Default 'mutex': the bank under one lock per bank. 'semaphore': units of work under permits of
   * one semaphore. 'multi': transfers under `acquireAll` of both accounts, one lock per account
   * (`resources` accounts, `accountsPerResource` ignored).
   */
  primitive?: Primitive
  /**
   * Semaphore mode: the limit the checker holds the run to, the limit the workers ask for (one more
   * in the broken-limit control), whether they check their permit before each unit of work, and
   * how much work a permit covers.
   */
  semaphore?: { limit: number; workerLimit: number; checks: boolean; units: [number, number]; unitMs: [number, number] }
  fencing: boolean
  guard: SqlGuard
  seed: number
  quorum: boolean
  nodes: number
  workers: number
  resources: number
  accountsPerResource: number
  initialBalance: number
  ttl: number
  warmupMs: number
  chaosMs: number
  /** Quiet time after the last fault heals, for the liveness check. */
  recoverMs: number
  hold: [number, number]
  historyPath: string
  pg: PgTarget
  /** Called about once a second with a one-line status. */
  progress: (line: string) => void
}

export interface AccountRow {
  id: number
  balance: number
  fence: number
}

export interface LedgerRow {
  seq: number
  account: number
  fence: number
  worker: string
}

export interface ProbeResult {
  resource: string
  ok: boolean
  waited: number
  error?: string
}

export interface FinalState {
  initialTotal: number
  accounts: AccountRow[]
  ledger: LedgerRow[]
  /** After every worker was killed with -9: how long a fresh client waited for each resource. */
  probes: ProbeResult[]
  /** History time at which the last fault healed and the recovery phase began. */
  healedAt: number
  chaosStart: number
  end: number
}

export interface RunResult {
  options: RunOptions
  plan: PlannedFault[]
  events: HistoryEvent[]
  final: FinalState
  workerErrors: string[]
}

interface Slot {
  slot: number
  generation: number
  child: ChildProcess | undefined
  paused: boolean
}

export async function runOnce(options: RunOptions): Promise<RunResult> {
  const semaphore = options.primitive === 'semaphore' ? options.semaphore : undefined
  if (options.primitive === 'semaphore' && !semaphore) throw new Error('runOnce: semaphore mode needs options.semaphore')
  // The mutex's history keeps its clock; the semaphore's compares processes to the millisecond.
  const now = semaphore ? monotonicNow : wallNow
  const history = new HistoryWriter(options.historyPath)
  const phase = (name: string) => history.add({ kind: 'meta', what: 'phase', name, time: now() })
  const schema = `fencelock_verify_${randomBytes(4).toString('hex')}`
  // The semaphore's protected work is observed in the history alone: no bank, no PostgreSQL.
  const db = semaphore ? undefined : new pg.Client(options.pg)
  db?.on('error', () => {})
  const redisNodes: RedisProcess[] = []
  const proxies: FaultProxy[] = []
  const slots: Slot[] = []
  const workerErrors: string[] = []
  let stopping = false
  let okOps = 0
  let faultsSoFar = 0

  // Transfer mode: one lock per account, named as the README's transfer example names them.
  const multi = options.primitive === 'multi'
  const resources: BankResource[] = Array.from({ length: options.resources }, (_, r) =>
    multi
      ? { name: `account:${r + 1}`, accounts: [r + 1] }
      : { name: `bank-${r}`, accounts: Array.from({ length: options.accountsPerResource }, (_, a) => r * 100 + a + 1) },
  )
  const holders = new Map<string, { slot: number; fence: number; deadline: number; read: boolean }>()
  // A mutex has one holder per resource; a semaphore's permits are told apart by their fence (the
  // nemesis then finds no holder under the resource's name and picks one that is working).
  const holderKey = (resource: string, fence: number | undefined) => (semaphore ? `${resource}#${fence}` : resource)

  const record = (event: HistoryEvent) => {
    history.add(event)
    if (event.kind === 'op') {
      if (event.type === 'ok') okOps++
      const slot = Number(event.worker.slice(1))
      const k = holderKey(event.resource, event.fence)
      if (event.f === 'acquire' && event.type === 'ok' && event.fence !== undefined) {
        const deadline = (event.value as { deadline?: number } | undefined)?.deadline ?? now() + options.ttl
        holders.set(k, { slot, fence: event.fence, deadline, read: false })
      }
      const holder = holders.get(k)
      if (holder && event.f === 'extend' && event.type === 'ok') holder.deadline = (event.value as { deadline?: number } | undefined)?.deadline ?? holder.deadline
      // "read" marks a holder in the middle of its work, the moment a pause hurts: between its read
      // and its write (mutex), or with units of work still to do after this one (semaphore).
      if (holder && event.f === 'read' && event.type === 'ok' && holder.fence === event.fence) holder.read = true
      if (holder && event.f === 'work' && event.type === 'invoke' && holder.fence === event.fence) {
        const { unit, of } = (event.value ?? {}) as { unit?: number; of?: number }
        holder.read = unit !== undefined && of !== undefined && unit < of - 1
      }
      if (event.f === 'release' && event.type === 'invoke' && holders.get(k)?.fence === event.fence) holders.delete(k)
    } else if (event.kind === 'lost' && holders.get(holderKey(event.resource, event.fence))?.fence === event.fence) {
      holders.delete(holderKey(event.resource, event.fence))
    }
  }

  const workerConfig = (slot: Slot): WorkerConfig => ({
    slot: slot.slot,
    generation: slot.generation,
    nodes: proxies.map((p) => ({ host: p.host, port: p.port })),
    quorum: options.quorum,
    fencing: options.fencing,
    guard: options.guard,
    pg: options.pg,
    schema,
    resources,
    prefix: 'verify:',
    ttl: options.ttl,
    maxTtl: quorumMaxTtl(options.ttl),
    wait: options.ttl * 3,
    hold: options.hold,
    seed: options.seed,
    ...(semaphore ? { semaphore: { limit: semaphore.workerLimit, checks: semaphore.checks, units: semaphore.units, unitMs: semaphore.unitMs } } : {}),
  })

  // Children the nemesis or the stop phase killed: their exit is not a crash. Per child, not per
  // slot: under load the exit of a killed worker can arrive after its replacement was spawned.
  const killed = new WeakSet<ChildProcess>()
  const spawnWorker = (slot: Slot) => {
    slot.paused = false
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, semaphore ? 'semaphore-worker.ts' : multi ? 'multi-worker.ts' : 'worker.ts'), JSON.stringify(workerConfig(slot))], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    slot.child = child
    const name = workerName(slot.slot)
    history.add({ kind: 'meta', what: 'spawn', name, time: now(), ...(child.pid ? { pid: child.pid } : {}) })
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        record(JSON.parse(line) as HistoryEvent)
      } catch {
        workerErrors.push(`${name}: unparsable line ${line.slice(0, 200)}`)
      }
    })
    let stderr = ''
    child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2_000)))
    child.once('exit', (code, signal) => {
      history.add({ kind: 'meta', what: 'exit', name, time: now(), ...(child.pid ? { pid: child.pid } : {}), detail: signal ?? `code ${code}` })
      if (slot.child === child) slot.child = undefined
      if (!killed.has(child) && !stopping && slot.child === undefined) {
        // A worker that dies on its own is a finding in itself: keep its last words, replace it.
        workerErrors.push(`${name} (pid ${child.pid}) exited unexpectedly (${signal ?? `code ${code}`}): ${stderr.trim().slice(-600)}`)
        slot.generation++
        setTimeout(() => !stopping && spawnWorker(slot), 200)
      }
    })
  }

  const fault = (f: PlannedFault, phaseName: 'start' | 'end', target: string, detail?: string) => {
    const event: FaultEvent = { kind: 'fault', phase: phaseName, fault: f.kind, target, id: f.id, time: now(), ...(detail ? { detail } : {}) }
    history.add(event)
  }

  const workerTarget = (f: PlannedFault): { slot: Slot; deadline: number | undefined } => {
    // Prefer whoever holds the lock right now: pausing or killing a holder is what tests fencing.
    const holder = holders.get(resources[f.resource]!.name) ?? [...holders.values()].find((h) => h.read && slots[h.slot]?.child)
    const bySlot = holder && slots[holder.slot]?.child ? slots[holder.slot] : undefined
    const fallback = slots.find((s, i) => i >= f.index && s.child) ?? slots.find((s) => s.child)
    return { slot: (bySlot ?? fallback ?? slots[0])!, deadline: bySlot ? holder?.deadline : undefined }
  }

  const applyFault = async (f: PlannedFault) => {
    faultsSoFar++
    switch (f.kind) {
      case 'pause-worker': {
        // Catch the holder between its read and its write (up to 300 ms): a pause there is the
        // one that makes an unfenced run lose an update, so the control run reliably shows it.
        // Under load a holder can be between leases for a while: wait up to two ttls for one that
        // has read (any resource when the planned one has none), so that the pause hits a lease
        // and not an idle waiter, whatever the machine's speed.
        const name = resources[f.resource]!.name
        const reading = () => holders.get(name)?.read || [...holders.values()].some((h) => h.read)
        for (let waited = 0; waited < 300 && !holders.get(name)?.read; waited += 2) await sleep(2)
        for (let waited = 0; waited < options.ttl * 2 && !reading(); waited += 2) await sleep(2)
        const { slot, deadline } = workerTarget(f)
        const child = slot.child
        if (!child) return
        const target = workerName(slot.slot)
        child.kill('SIGSTOP')
        slot.paused = true
        // Just past the deadline: the next holder is most likely between its read and its write.
        const duration = f.justPast && deadline !== undefined ? Math.max(20, deadline - now()) + f.delayMs : f.duration
        fault(f, 'start', target, `pid ${child.pid}${deadline === undefined ? ' (holds no lease)' : ''}, ${Math.round(duration)} ms${f.justPast && deadline !== undefined ? `, until ${f.delayMs} ms past its lease's deadline` : ''}`)
        await sleep(duration)
        child.kill('SIGCONT')
        slot.paused = false
        fault(f, 'end', target)
        return
      }
      case 'kill-worker': {
        const { slot } = workerTarget(f)
        const child = slot.child
        if (!child) return
        const target = workerName(slot.slot)
        killed.add(child)
        child.kill('SIGCONT')
        child.kill('SIGKILL')
        fault(f, 'start', target, `pid ${child.pid}, respawn after ${f.duration} ms`)
        await sleep(f.duration)
        slot.generation++
        if (!stopping) spawnWorker(slot)
        fault(f, 'end', target)
        return
      }
      case 'kill-redis': {
        const node = redisNodes[f.index]!
        fault(f, 'start', `redis${f.index}`, `restart empty after ${f.duration} ms`)
        await node.kill9()
        await sleep(f.duration)
        await node.restart()
        fault(f, 'end', `redis${f.index}`)
        return
      }
      case 'partition': {
        const proxy = proxies[f.index]!
        proxy.partition()
        fault(f, 'start', `redis${f.index}`, `${f.duration} ms`)
        await sleep(f.duration)
        proxy.heal()
        fault(f, 'end', `redis${f.index}`)
        return
      }
      case 'delay': {
        const proxy = proxies[f.index]!
        proxy.setDelay(f.delayMs)
        fault(f, 'start', `redis${f.index}`, `+${f.delayMs} ms each way for ${f.duration} ms`)
        await sleep(f.duration)
        proxy.heal()
        fault(f, 'end', `redis${f.index}`)
        return
      }
      case 'script-flush': {
        fault(f, 'start', `redis${f.index}`)
        await redisNodes[f.index]!.cli('SCRIPT', 'FLUSH').catch(() => '')
        fault(f, 'end', `redis${f.index}`)
        return
      }
      case 'reconnect': {
        fault(f, 'start', `redis${f.index}`, `${proxies[f.index]!.connections()} connections reset`)
        proxies[f.index]!.resetAll()
        fault(f, 'end', `redis${f.index}`)
        return
      }
    }
  }

  const plan = planFaults({
    seed: options.seed,
    duration: options.chaosMs,
    ttl: options.ttl,
    workers: options.workers,
    nodes: options.nodes,
    resources: options.resources,
  })

  let ticker: NodeJS.Timeout | undefined
  let probeClients: Redis[] = []
  try {
    // ------------------------------------------------------------------ setup
    phase('setup')
    if (db) {
      await db.connect()
      await db.query(`CREATE SCHEMA ${schema}`)
      await db.query(`CREATE TABLE ${schema}.accounts (id int PRIMARY KEY, bank text NOT NULL, balance bigint NOT NULL, fence bigint NOT NULL DEFAULT 0)`)
      // Every committed write also appends here; rows of one account are appended under that
      // account's row lock, so per account `seq` is commit order.
      await db.query(`CREATE TABLE ${schema}.ledger (seq bigserial PRIMARY KEY, account int NOT NULL, fence bigint NOT NULL, worker text NOT NULL, balance bigint NOT NULL)`)
      for (const bank of resources) {
        for (const id of bank.accounts) await db.query(`INSERT INTO ${schema}.accounts (id, bank, balance) VALUES ($1, $2, $3)`, [id, bank.name, options.initialBalance])
      }
    }
    const initialTotal = options.initialBalance * resources.reduce((n, r) => n + r.accounts.length, 0)

    for (let i = 0; i < options.nodes; i++) {
      const node = await startRedis()
      redisNodes.push(node)
      proxies.push(await startFaultProxy({ host: node.host, port: node.port }))
    }
    for (let i = 0; i < options.workers; i++) {
      const slot: Slot = { slot: i, generation: 0, child: undefined, paused: false }
      slots.push(slot)
      spawnWorker(slot)
    }

    let phaseName = 'warmup'
    let lastOps = 0
    let lastTick = performance.now()
    const started = performance.now()
    ticker = setInterval(() => {
      const t = performance.now()
      const rate = ((okOps - lastOps) * 1000) / Math.max(1, t - lastTick)
      lastOps = okOps
      lastTick = t
      options.progress(
        `[${options.label}] ${phaseName.padEnd(8)} ${((t - started) / 1000).toFixed(0).padStart(4)} s  ` +
          `faults ${String(faultsSoFar).padStart(3)}/${plan.length}  ops/s ${rate.toFixed(0).padStart(4)}  ok ops ${okOps}`,
      )
    }, 1_000)
    ticker.unref()

    // ------------------------------------------------------------------ warmup: every worker up
    phase('warmup')
    const warmupEnd = performance.now() + options.warmupMs
    const seen = () => new Set(history.events.filter((e) => e.kind === 'op').map((e) => (e as { worker: string }).worker)).size
    while (performance.now() < warmupEnd || (seen() < options.workers && performance.now() < warmupEnd + 15_000)) await sleep(100)

    // ------------------------------------------------------------------ chaos
    phase('chaos')
    phaseName = 'chaos'
    const chaosStart = now()
    const chaosT0 = performance.now()
    for (const f of plan) {
      await sleep(chaosT0 + f.at - performance.now())
      await applyFault(f)
    }
    await sleep(chaosT0 + options.chaosMs - performance.now())

    // ------------------------------------------------------------------ heal, then recover
    for (const proxy of proxies) proxy.heal()
    for (const slot of slots) if (slot.paused) slot.child?.kill('SIGCONT')
    const healedAt = now()
    phase('recover')
    phaseName = 'recover'
    await sleep(options.recoverMs)

    // ------------------------------------------------------------------ stop: kill -9 every worker
    phase('stop')
    phaseName = 'probe'
    stopping = true
    await Promise.all(
      slots.map(async (slot) => {
        const child = slot.child
        if (!child) return
        killed.add(child)
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
        child.kill('SIGKILL')
        await exited
      }),
    )

    // ------------------------------------------------------------------ probe: a fresh client
    phase('probe')
    probeClients = proxies.map((p) => new Redis({ host: p.host, port: p.port, maxRetriesPerRequest: 2 }))
    for (const client of probeClients) client.on('error', () => {})
    const probeLocks = options.quorum
      ? createLocks({ redis: probeClients, prefix: 'verify:', ttl: options.ttl, maxTtl: quorumMaxTtl(options.ttl) })
      : createLocks({ redis: probeClients[0]!, prefix: 'verify:', ttl: options.ttl })
    // Semaphore mode: every permit at once (with the workers' limit: another would be refused while
    // their permits are still held), each probe waiting for one and keeping it until all are taken.
    const probeHeld: { release(): Promise<boolean> }[] = []
    const probeTargets = semaphore ? Array.from({ length: semaphore.workerLimit }, () => resources[0]!.name) : resources.map((r) => r.name)
    const probes = await Promise.all(
      probeTargets.map(async (name): Promise<ProbeResult> => {
        const t0 = now()
        history.add({ kind: 'op', type: 'invoke', f: 'probe', worker: 'probe', pid: process.pid, resource: name, time: t0 })
        try {
          const lease = semaphore
            ? await probeLocks.semaphore(name, { limit: semaphore.workerLimit }).acquire({ wait: options.ttl * 3 + 5_000 })
            : await probeLocks.acquire(name, { wait: options.ttl * 3 + 5_000 })
          const waited = now() - t0
          history.add({ kind: 'op', type: 'ok', f: 'probe', worker: 'probe', pid: process.pid, resource: name, fence: lease.fence, time: now(), value: { waited } })
          if (semaphore) probeHeld.push(lease)
          else await lease.release().catch(() => false)
          return { resource: name, ok: true, waited }
        } catch (err) {
          const error = `${(err as { code?: string }).code ?? 'Error'}: ${(err as Error).message}`
          history.add({ kind: 'op', type: 'fail', f: 'probe', worker: 'probe', pid: process.pid, resource: name, time: now(), error })
          return { resource: name, ok: false, waited: now() - t0, error }
        }
      }),
    )
    await Promise.all(probeHeld.map((lease) => lease.release().catch(() => false)))
    await probeLocks.close()

    // ------------------------------------------------------------------ final state
    const accounts = !db ? [] : (await db.query<{ id: number; balance: string; fence: string }>(`SELECT id, balance, fence FROM ${schema}.accounts ORDER BY id`)).rows.map(
      (r) => ({ id: r.id, balance: Number(r.balance), fence: Number(r.fence) }),
    )
    const ledger = !db ? [] : (await db.query<{ seq: string; account: number; fence: string; worker: string }>(`SELECT seq, account, fence, worker FROM ${schema}.ledger ORDER BY seq`)).rows.map(
      (r) => ({ seq: Number(r.seq), account: r.account, fence: Number(r.fence), worker: r.worker }),
    )
    phase('done')
    const final: FinalState = { initialTotal, accounts, ledger, probes, healedAt, chaosStart, end: now() }
    // Beside the history, so that `tsx verify/check.ts <history>` can check it again later.
    writeFileSync(finalStatePath(options.historyPath), JSON.stringify({ ttl: options.ttl, fencing: options.fencing, final, ...(semaphore ? { primitive: 'semaphore', semaphore, nodes: options.nodes } : multi ? { primitive: 'multi' } : {}) }))
    return { options, plan, events: history.events, final, workerErrors }
  } finally {
    stopping = true
    clearInterval(ticker)
    for (const slot of slots) {
      slot.child?.kill('SIGCONT')
      slot.child?.kill('SIGKILL')
    }
    for (const client of probeClients) client.disconnect()
    await Promise.all(proxies.map((p) => p.close()))
    await Promise.all(redisNodes.map((n) => n.stop()))
    if (db) {
      await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {})
      await db.end().catch(() => {})
    }
    history.flush()
  }
}
