// One small adapter per lock library, so every scenario drives fencelock and its peers the same
// way: acquire (waiting as that library waits), critical section, release.
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { Redlock as SesameRedlock } from '@sesamecare-oss/redlock'
import type { Redis } from 'ioredis'
import Redlock4 from 'redlock'
import Redlock5 from 'redlock5'
import { Mutex, RedlockMutex } from 'redis-semaphore'
import type { Lease, Locks } from '../src/index.js'
import { fencelock, fencelockBefore } from './library.js'
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { luaSource } from '../scripts/lua-source.mjs'

/** fencelock quorum mode's maxTtl in the bench: the longest ttl the scenarios ask for. */
export const QUORUM_MAX_TTL = 10_000
import { clock, sleep } from './stats.js'

export type LibKind = 'fencelock' | 'fencelock-before' | 'seed' | 'redlock4' | 'redlock5' | 'sesame' | 'semaphore' | 'semaphore-redlock' | 'fencelock-scripts'

/** Rows that are not a library to compare with: they show what part of fencelock's cost is where. */
export const REFERENCE_KINDS: ReadonlySet<string> = new Set<LibKind>(['fencelock-scripts', 'fencelock-before'])

/** A library with its retry setting: `retry` undefined means the library's defaults. */
export interface LibSpec {
  kind: LibKind
  retry?: number
  /** fencelock only: a subscriber on every `fencelock:*` diagnostics channel while it runs (scenario A). */
  telemetry?: boolean
}

/** fencelock's diagnostics channels (README, "Telemetry"): the telemetry variant subscribes to all. */
export const TELEMETRY_CHANNELS = [
  'fencelock:acquire:start',
  'fencelock:acquire',
  'fencelock:extend',
  'fencelock:lost',
  'fencelock:release',
  'fencelock:fenced-write',
] as const

export const LIB_NAMES: Record<LibKind, string> = {
  fencelock: 'fencelock',
  'fencelock-before': 'fencelock before (the build in FENCELOCK_BENCH_BEFORE, paired)',
  seed: 'seed SET NX + Lua',
  redlock4: 'redlock 4.2',
  redlock5: 'redlock 5.0-beta',
  sesame: '@sesamecare-oss/redlock',
  semaphore: 'redis-semaphore Mutex',
  'semaphore-redlock': 'redis-semaphore RedlockMutex',
  'fencelock-scripts': "fencelock's scripts sent by hand (reference, no library code)",
}

/** The seed article sleeps 100 ms between attempts; redis-semaphore's default retryInterval is 10 ms. */
const DEFAULT_RETRY: Partial<Record<LibKind, string>> = {
  seed: '100 ms',
  redlock4: '200±100 ms ×10',
  redlock5: '200±100 ms ×10',
  sesame: '200±100 ms ×10',
  semaphore: '10 ms',
  'semaphore-redlock': '10 ms',
}

export function libLabel(spec: LibSpec): string {
  const name = LIB_NAMES[spec.kind]
  if (spec.kind === 'fencelock') return spec.telemetry ? `${name} + telemetry subscriber` : name
  if (REFERENCE_KINDS.has(spec.kind)) return name
  if (spec.retry === undefined) return `${name} (defaults: ${DEFAULT_RETRY[spec.kind] ?? '?'})`
  return `${name} (retry ${spec.retry} ms)`
}

export interface Held {
  readonly fence: number | undefined
  release(): Promise<unknown>
}

export interface LockLib {
  readonly label: string
  /**
   * Waits for `key` the way an application would with this library: the library's own waiting,
   * and a new call whenever the library gives up (counted in `giveUps`), until `wait` ms passed.
   * `wait` 0: one call (fencelock: `tryAcquire`).
   */
  acquire(key: string, ttl: number, wait: number): Promise<Held>
  /** How often the library gave up (LockError, ExecutionError, TimeoutError) and was called again. */
  giveUps: number
  close(): Promise<void>
}

export class QuorumUnavailable extends Error {
  override readonly name = 'QuorumUnavailable'
}

const SEED_RELEASE = `if redis.call("get", KEYS[1]) == ARGV[1] then
  return redis.call("del", KEYS[1])
else
  return 0
end`

export class AcquireTimeout extends Error {
  override readonly name = 'AcquireTimeout'
}

/** Calls `attempt` until it succeeds; every failure is a give-up of the library's own wait. */
export async function retrying(lib: { giveUps: number }, key: string, wait: number, attempt: () => Promise<Held>): Promise<Held> {
  const deadline = clock() + wait
  for (;;) {
    try {
      return await attempt()
    } catch (err) {
      lib.giveUps++
      if (clock() >= deadline) throw new AcquireTimeout(`gave up on ${key} after ${wait} ms: ${(err as Error).message}`)
    }
  }
}

/**
 * "Fastest sensible retry" for the Redlock family: a 10 ms delay with small jitter, over the same
 * ~2 s window as its defaults (10 retries x 200 ms). Not retryCount -1: redlock 5 releases a
 * partial (minority) acquisition only when it gives up, so with -1 a split vote in quorum mode
 * holds a node until the ttl expires.
 */
function redlockSettings(spec: LibSpec) {
  const delay = spec.retry ?? 10
  return spec.retry !== undefined ? { retryCount: Math.round(2_000 / delay), retryDelay: delay, retryJitter: Math.floor(delay / 2) } : {}
}

function openFencelock(spec: LibSpec, clients: Redis[], label: string, lib = fencelock): LockLib {
  let locks: Locks
  try {
    // Quorum mode: maxTtl bounds the ttl (the bench asks for 10 s) and is how long a node must
    // have been up before it counts (bench/scenarios.ts waits for that after starting the nodes).
    locks = clients.length === 1 ? lib.createLocks({ redis: clients[0]! }) : lib.createLocks({ redis: clients, maxTtl: QUORUM_MAX_TTL })
  } catch (err) {
    if (err instanceof lib.InvalidArgumentError && /not available/i.test(err.message)) throw new QuorumUnavailable(err.message)
    throw err
  }
  // A subscriber that reads one field of each message, as a metrics exporter would.
  let seen = 0
  const listener = (message: unknown) => {
    if ((message as { resource?: unknown }).resource !== undefined) seen++
  }
  if (spec.telemetry) for (const name of TELEMETRY_CHANNELS) subscribe(name, listener)
  return {
    label,
    giveUps: 0,
    async acquire(key, ttl, wait) {
      // wait 0: one attempt, as an application calls it (tryAcquire).
      const lease: Lease | null = wait === 0 ? await locks.tryAcquire(key, { ttl }) : await locks.acquire(key, { ttl, wait })
      if (!lease) throw new AcquireTimeout(`fencelock: ${key} is taken (tryAcquire)`)
      return { fence: lease.fence, release: () => lease.release() }
    },
    close: async () => {
      if (spec.telemetry) for (const name of TELEMETRY_CHANNELS) unsubscribe(name, listener)
      await locks.close()
      if (spec.telemetry && seen === 0) throw new Error('the telemetry subscriber received no message: are the fencelock:* channel names still right?')
    },
  }
}

/** The seed article's algorithm: SET NX PX with a random token, sleep and retry, compare-and-delete. */
function openSeed(spec: LibSpec, first: Redis, label: string): LockLib {
  const retry = spec.retry ?? 100
  return {
    label,
    giveUps: 0,
    async acquire(key, ttl, wait) {
      const token = randomUUID()
      const deadline = clock() + wait
      for (;;) {
        if ((await first.set(key, token, 'PX', ttl, 'NX')) === 'OK') {
          return { fence: undefined, release: () => first.eval(SEED_RELEASE, 1, key, token) }
        }
        if (clock() >= deadline) throw new AcquireTimeout(`seed: gave up on ${key}`)
        await sleep(retry)
      }
    },
    close: async () => {},
  }
}

function openRedlock4(spec: LibSpec, clients: Redis[], label: string): LockLib {
  const redlock = new Redlock4(clients, redlockSettings(spec))
  redlock.on('clientError', () => {})
  const lib: LockLib = {
    label,
    giveUps: 0,
    acquire: (key, ttl, wait) =>
      retrying(lib, key, wait, async () => {
        const lock = await redlock.lock(key, ttl)
        return { fence: undefined, release: () => lock.unlock() }
      }),
    close: async () => {},
  }
  return lib
}

/** redlock 5 and @sesamecare-oss/redlock: the same API. */
function openRedlock5(spec: LibSpec, clients: Redis[], label: string): LockLib {
  const redlock = spec.kind === 'redlock5' ? new Redlock5(clients, redlockSettings(spec)) : new SesameRedlock(clients, redlockSettings(spec))
  redlock.on('error', () => {})
  const lib: LockLib = {
    label,
    giveUps: 0,
    acquire: (key, ttl, wait) =>
      retrying(lib, key, wait, async () => {
        const lock = await redlock.acquire([key], ttl)
        return { fence: undefined, release: () => lock.release() }
      }),
    close: async () => {},
  }
  return lib
}

/**
 * fencelock's own acquire and release scripts with the library's default arguments, sent on the
 * client with nothing of fencelock around them (no waiting: one attempt, as A and B need): the row
 * shows what the scripts cost in Redis and on the wire, the gap to fencelock's row what its
 * JavaScript costs. Not a peer: the targets leave it out.
 */
/** A mutex script as it ships (read from its .lua file, as the build embeds it), with its SHA1. */
function shippedScript(name: string): { sha: string; source: string } {
  const source = luaSource(fileURLToPath(new URL(`../src/primitives/mutex/${name}.lua`, import.meta.url)))
  return { sha: createHash('sha1').update(source).digest('hex'), source }
}

/** The mutex's keys of `resource` under the default prefix, as Redis holds them (the layout of src/primitives/lock.ts). */
const mutexKeysOf = (resource: string) => {
  const base = `fencelock:{${resource}}:`
  return { lock: `${base}L`, fence: `${base}F`, queue: `${base}Q`, queueExpiry: `${base}X`, channel: `${base}W` }
}

/** The holder label createLocks records by default (its `holder` option). */
const DEFAULT_HOLDER = `${hostname()}:${process.pid}`

function openFencelockScripts(first: Redis, label: string): LockLib {
  const mutexAcquire = shippedScript('mutex-acquire')
  const mutexRelease = shippedScript('mutex-release')
  const loaded = new Set<string>()
  const run = (script: { sha: string; source: string }, keys: string[], args: (string | number)[]) => {
    if (loaded.has(script.sha)) return first.evalsha(script.sha, keys.length, ...keys, ...args)
    loaded.add(script.sha)
    return first.eval(script.source, keys.length, ...keys, ...args)
  }
  return {
    label,
    giveUps: 0,
    async acquire(key, ttl) {
      const k = mutexKeysOf(key)
      const token = randomUUID()
      const grace = String(Math.min(2_000, Math.floor(ttl / 4)))
      const args = [token, ttl, '86400000', '', grace, '', '', DEFAULT_HOLDER]
      const [granted, fence] = (await run(mutexAcquire, [k.lock, k.fence, k.queue, k.queueExpiry], args)) as [number, number]
      if (granted !== 1) throw new AcquireTimeout(`fencelock's scripts: ${key} is taken (this reference row makes one attempt)`)
      return { fence, release: () => run(mutexRelease, [k.lock, k.queue, k.queueExpiry], [token, k.channel, grace]) }
    },
    close: async () => {},
  }
}

/** redis-semaphore's Mutex (one node) or RedlockMutex (quorum). */
function openRedisSemaphoreMutex(spec: LibSpec, clients: Redis[], label: string): LockLib {
  const lib: LockLib = {
    label,
    giveUps: 0,
    acquire: (key, ttl, wait) =>
      retrying(lib, key, wait, async () => {
        // acquireTimeout: its default (10 s) unless the caller's budget is shorter.
        // wait 0: one attempt (an acquireTimeout of 0 would end its loop before the first attempt).
        const options = {
          lockTimeout: ttl,
          ...(wait > 0 ? { acquireTimeout: Math.min(wait, 10_000) } : { acquireAttemptsLimit: 1 }),
          ...(spec.retry !== undefined ? { retryInterval: spec.retry } : {}),
        }
        const mutex = spec.kind === 'semaphore' ? new Mutex(clients[0]!, key, options) : new RedlockMutex(clients, key, options)
        if (wait === 0) {
          if (!(await mutex.tryAcquire())) throw new AcquireTimeout(`redis-semaphore: ${key} is taken (tryAcquire)`)
        } else await mutex.acquire()
        return { fence: undefined, release: () => mutex.release() }
      }),
    close: async () => {},
  }
  return lib
}

/** Opens `spec` over `clients` (one client: single node; three: quorum). */
export function openLib(spec: LibSpec, clients: Redis[]): LockLib {
  const label = libLabel(spec)
  const first = clients[0]
  if (!first) throw new Error('openLib: no Redis client')
  switch (spec.kind) {
    case 'fencelock':
      return openFencelock(spec, clients, label)
    case 'fencelock-before':
      if (!fencelockBefore) throw new Error('bench: the "fencelock before" row needs FENCELOCK_BENCH_BEFORE (a folder with a build\'s index.js)')
      return openFencelock(spec, clients, label, fencelockBefore)
    case 'seed':
      return openSeed(spec, first, label)
    case 'redlock4':
      return openRedlock4(spec, clients, label)
    case 'redlock5':
    case 'sesame':
      return openRedlock5(spec, clients, label)
    case 'fencelock-scripts':
      return openFencelockScripts(first, label)
    case 'semaphore':
    case 'semaphore-redlock':
      return openRedisSemaphoreMutex(spec, clients, label)
  }
}
