// Small helpers shared by the scenario suites.
import type { Locks } from '../src/index.js'
import type { TestClient } from './clients.js'

import { sleep, until } from './until.js'

export { sleep, until, type UntilOptions } from './until.js'

/** Waits until `locks` sees `resource` free with nobody queued; rejects (as `until`) after `timeoutMs`. */
export const untilFree = (locks: Pick<Locks, 'inspect'>, resource: string, timeoutMs: number): Promise<true> =>
  until(
    `${resource} is free with nobody queued`,
    async () => {
      const info = await locks.inspect(resource)
      return !info.held && info.waiters === 0
    },
    { timeout: timeoutMs },
  )

/** Redis key names of a resource (mirrors src/util/keys.ts; the tests check Redis directly). */
export const keysOf = (prefix: string, resource: string) => ({
  lock: `${prefix}{${resource}}:L`,
  fence: `${prefix}{${resource}}:F`,
  queue: `${prefix}{${resource}}:Q`,
  queueExpiry: `${prefix}{${resource}}:X`,
  channel: `${prefix}{${resource}}:W`,
})

/**
 * The lease token in a lock key's value as Redis holds it (`<token> <sinceMs> <extendedMs> <holder>`,
 * or a bare token), or null for a missing key: what a test compares with `lease.token`.
 */
export const tokenIn = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value.split(' ')[0]! : null)

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
