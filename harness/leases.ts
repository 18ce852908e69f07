// What the renewal tests check about a batch of leases once some of them lost their locks.
import { expect } from 'vitest'
import { LockLostError, type Lease } from '../src/index.js'
import { sleep, until } from './util.js'

/** Waits until the `lost` leases are aborted, one more renewal or two, then: exactly those, each 'refused'. */
export async function expectExactlyLost(leases: readonly Lease[], lost: ReadonlySet<number>, ttl: number): Promise<void> {
  await until('the lost leases to abort', () => [...lost].every((i) => leases[i]!.signal.aborted), { timeout: 3 * ttl })
  await sleep(ttl) // and nothing else goes with them over another renewal or two
  for (const [i, lease] of leases.entries()) {
    if (lost.has(i)) {
      expect(lease.signal.reason).toBeInstanceOf(LockLostError)
      expect((lease.signal.reason as LockLostError).reason).toBe('refused')
      expect(lease.held).toBe(false)
    } else if (lease.signal.aborted || !lease.held) {
      throw new Error(`lease ${i} was lost too: ${String(lease.signal.reason)}`)
    }
  }
}

/**
 * Releases `held` and waits for `waiting`, the lease of the next holder, then releases that too.
 * Checks that the release found the lock and that the next fence is larger; returns how long after
 * the release the next holder got the lock.
 */
export async function handOver(held: Lease, waiting: Promise<Lease>): Promise<number> {
  const releasedAt = performance.now()
  expect(await held.release()).toBe(true)
  const lease = await waiting
  const latency = performance.now() - releasedAt
  expect(lease.fence).toBeGreaterThan(held.fence)
  await lease.release()
  return latency
}
