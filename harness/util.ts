// Small helpers shared by the scenario suites.
import type { Locks } from '../src/index.js'
import type { TestClient } from './clients.js'

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Polls `check` every `everyMs` until it returns true; rejects with `what` after `timeoutMs`. */
export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5_000, everyMs = 10): Promise<number> {
  const started = performance.now()
  for (;;) {
    if (await check()) return performance.now() - started
    if (performance.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`)
    await sleep(everyMs)
  }
}

/** Waits until `locks` sees `resource` free with nobody queued; rejects (as waitUntil) after `timeoutMs`. */
export const untilFree = (locks: Pick<Locks, 'inspect'>, resource: string, timeoutMs: number): Promise<number> =>
  waitUntil(
    `${resource} is free with nobody queued`,
    async () => {
      const info = await locks.inspect(resource)
      return !info.held && info.waiters === 0
    },
    timeoutMs,
  )

/** Redis key names of a resource (mirrors src/util/keys.ts; the tests check Redis directly). */
export const keysOf = (prefix: string, resource: string) => ({
  lock: `${prefix}{${resource}}:L`,
  fence: `${prefix}{${resource}}:F`,
  queue: `${prefix}{${resource}}:Q`,
  queueExpiry: `${prefix}{${resource}}:X`,
  channel: `${prefix}{${resource}}:W`,
})

export const pttl = async (client: TestClient, key: string): Promise<number> => Number(await client.command('PTTL', key))

/** `acquire(i)` for i below `count`, 100 at a time, so that the leases fall on few renewal grid points. */
export async function acquireMany<L>(count: number, acquire: (i: number) => Promise<L>): Promise<L[]> {
  const leases: L[] = []
  for (let i = 0; i < count; i += 100) leases.push(...(await Promise.all(Array.from({ length: Math.min(100, count - i) }, (_, j) => acquire(i + j)))))
  return leases
}

/** Names unique within a suite: the maker's `name('basic')` is 'basic-1', the next call 'basic-2', and so on. */
export function nameMaker(): (base: string) => string {
  let n = 0
  return (base) => `${base}-${++n}`
}

let counter = 0
/** A prefix no other test (or earlier run on a reused server) shares. */
export const uniquePrefix = (name: string) => `fl-${name}-${process.pid}-${++counter}:`

/**
 * Closes locks instances for cleanup, but never waits more than `ms`: a close() that hangs is a
 * bug reported by its own test (wakeups, lifecycle), not a hook timeout in an unrelated one.
 */
export async function closeQuietly(instances: readonly ({ close(): Promise<void> } | undefined)[], ms = 2_000): Promise<void> {
  await Promise.race([Promise.allSettled(instances.map((l) => l?.close())), sleep(ms)])
}
