// The drop-in fencelock/redlock on its own: node-redlock's API (v4 callbacks and events, v5
// acquire/using/ExecutionError), its Redis layout (the resource's name is the key), and what
// fencelock adds (fences, the loss signal, waking at once). Per client library, on real Redis.
import { describe, expect, it } from 'vitest'
import { adapters } from '../../harness/clients.js'
import { describeRedis, useIoredis } from '../../harness/per-adapter.js'
import { until } from '../../harness/util.js'
import { clusterSlot } from '../../src/util/keys.js'
import { besideBase, redlockKeys } from '../../src/primitives/redlock/redlock.js'
import Redlock, { ExecutionError, type Lock, LockError, type Settings } from '../../src/compat/redlock/index.js'

describe('redlock keys: fencelock’s state beside the resource, in its cluster slot', () => {
  it.each(['orders:42', '{user:1}:cart', 'a{b', 'a}b', '{}x', 'x{}', '}{', '{a}'])('%s', (resource) => {
    const keys = redlockKeys(resource)
    expect(keys.lock).toBe(resource)
    for (const key of [keys.fence, keys.queue, keys.queueExpiry]) {
      expect(clusterSlot(key)).toBe(clusterSlot(resource))
      expect(key).not.toBe(resource)
    }
  })

  it('keeps a tagged name as it is, wraps an untagged one, and prefixes a tag of the slot where braces make no tag', () => {
    expect(besideBase('{user:1}:cart')).toBe('{user:1}:cart')
    expect(besideBase('orders:42')).toBe('{orders:42}')
    expect(besideBase('a}b')).toMatch(/^\{[0-9a-z]+\}a\}b$/)
  })
})

describeRedis('fencelock/redlock', (server) => {
  const plain = useIoredis(server)
  describe.each(adapters.map((a) => [a.name, a] as const))('on %s', (_name, adapter) => {
    const connect = () => adapter.connect(server.url)
    /** A drop-in with `settings` on a client of its own, which quits after `body`, whatever happens. */
    const withRedlock = async (settings: Settings, body: (redlock: Redlock) => Promise<void>): Promise<void> => {
      const client = await connect()
      try {
        await body(new Redlock([client.raw], settings))
      } finally {
        await client.quit()
      }
    }

    it('refuses no clients, custom scripts and meaningless settings, with node-redlock’s or fencelock’s message', async () => {
      const client = await connect()
      try {
        expect(() => new Redlock([])).toThrow('Redlock must be instantiated with at least one redis client.')
        expect(() => new Redlock([client.raw], { lockScript: (s: string) => s } as never)).toThrow(/Expected no `lockScript` option/)
        expect(() => new Redlock([client.raw], { retryDelay: -1 })).toThrow('Expected `retryDelay` to be a number from 0 to 9007199254740991, got -1')
        expect(() => new Redlock([client.raw], { db: 16 })).toThrow('Expected `db` to be a number from 0 to 15, got 16')
        const redlock = new Redlock([client.raw])
        await expect(redlock.acquire(['r'], 1.5)).rejects.toThrow('Duration must be an integer value in milliseconds.')
        await expect(redlock.using(['r'], 400, async () => 1)).rejects.toThrow(
          'A lock `duration` must be at least 100ms greater than the `automaticExtensionThreshold` setting.',
        )
        await expect(redlock.acquire([], 1000)).rejects.toThrow('Expected `resources` to hold at least one resource name, got []')
      } finally {
        await client.quit()
      }
    })

    it('v4: locks in node-redlock’s layout, answers callbacks, extends in place, and says why unlock failed', async () => {
      const resource = `v4:${adapter.name}`
      await withRedlock({ retryCount: 0 }, async (redlock) => {
        const lock = await new Promise<Lock>((resolve, reject) => redlock.lock(resource, 1_000, (err, l) => (err ? reject(err) : resolve(l!))))
        expect(lock).toBeInstanceOf(Redlock.Lock)
        expect(await plain.client.get(resource)).toBe(lock.value)
        expect(lock.attempts).toBe(1)
        const taken = await redlock.lock(resource, 1_000).catch((e: unknown) => e)
        expect(taken).toBeInstanceOf(Redlock.LockError)
        expect((taken as LockError).message).toBe(`Exceeded 0 attempts to lock the resource "${resource}".`)
        const extended = await lock.extend(5_000)
        expect(extended).toBe(lock)
        expect(await plain.client.pttl(resource)).toBeGreaterThan(4_000)
        await lock.unlock()
        expect(lock.expiration).toBe(0)
        expect(await plain.client.exists(resource)).toBe(0)
        const again = await new Promise<Error | null>((resolve) => void lock.unlock((err) => resolve(err)))
        expect(again?.message).toBe(`Unable to fully release the lock on resource "${resource}".`)
        await expect(lock.extend(1_000)).rejects.toThrow(`Cannot extend lock on resource "${resource}" because the lock has already expired.`)
      })
    })

    it('v4: emits clientError (and v5’s error) with the client’s reply error', async () => {
      const client = await connect()
      const resource = `wrongtype:${adapter.name}`
      try {
        await plain.client.sadd(resource, 'x')
        const redlock = new Redlock([client.raw], { retryCount: 0 })
        const seen: Error[] = []
        redlock.on('clientError', (err: Error) => seen.push(err))
        await expect(redlock.lock(resource, 1_000)).rejects.toBeInstanceOf(LockError)
        expect(seen.length).toBe(1)
        expect(seen[0]!.message).toMatch(/WRONGTYPE/)
      } finally {
        await plain.client.del(resource)
        await client.quit()
      }
    })

    it('v5: ExecutionError with one attempt per retry, each vote against a ResourceLockedError', async () => {
      const resource = `v5:${adapter.name}`
      await withRedlock({ retryCount: 2, retryDelay: 20, retryJitter: 0 }, async (redlock) => {
        const lock = await redlock.acquire([resource], 2_000)
        const failed = await redlock.acquire([resource], 2_000).catch((e: unknown) => e)
        expect(failed).toBeInstanceOf(ExecutionError)
        const attempts = await Promise.all((failed as ExecutionError).attempts)
        expect(attempts.length).toBe(3)
        expect(attempts[0]).toMatchObject({ membershipSize: 1, quorumSize: 1 })
        expect([...attempts[0]!.votesAgainst.values()][0]!.name).toBe('ResourceLockedError')
        const next = await redlock.extend(lock, 3_000)
        expect(next).not.toBe(lock)
        expect(lock.expiration).toBe(0)
        await expect(redlock.extend(lock, 1_000)).rejects.toThrow('Cannot extend an already-expired lock.')
        expect((await next.release())?.attempts.length).toBe(1)
        await expect(next.release()).rejects.toThrow('The operation was unable to achieve a quorum during its retry window.')
      })
    })

    it('gives fences that increase, and wakes a drop-in waiter at once when a drop-in holder releases', async () => {
      const [a, b] = [await connect(), await connect()]
      const resource = `fence:${adapter.name}`
      try {
        const one = new Redlock([a.raw], { retryCount: 50, retryDelay: 1_000, retryJitter: 0 })
        // Its re-check (retryDelay) and the holder's ttl both end after 10 s.
        const two = new Redlock([b.raw], { retryCount: 3, retryDelay: 10_000, retryJitter: 0 })
        const first = await one.acquire([resource], 10_000)
        const waiting = two.acquire([resource], 10_000)
        await until('the drop-in waiter stands in line', async () => (await plain.client.zcard(redlockKeys(resource).queue)) === 1)
        const releasedAt = performance.now()
        await first.release()
        const second = await waiting
        // Woken by the release: without the wake-up it would look again only after 10 s (its
        // retryDelay, the holder's ttl). The drop-in reports no wake reasons (node-redlock's API
        // has none), so the time says it: half the re-check, over 10x a wake-up on a loaded machine.
        expect(performance.now() - releasedAt).toBeLessThan(5_000)
        expect(second.fence!).toBeGreaterThan(first.fence!)
        await second.release()
      } finally {
        await a.quit()
        await b.quit()
      }
    })

    it('aborts the lock’s signal when the lock is lost, and `using` tells its routine through signal.error', async () => {
      const client = await connect()
      const resource = `lost:${adapter.name}`
      try {
        const redlock = new Redlock([client.raw], { retryCount: 0, automaticExtensionThreshold: 200 })
        const outcome = await redlock.using([resource], 400, async (signal) => {
          await plain.client.set(resource, 'someone else')
          // The extension, due 200 ms before expiry, finds another value: the signal aborts.
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))
          return signal.error
        })
        // The lease's own loss (LockLostError) when it comes first, else the failed extension's ExecutionError.
        expect(['LockLostError', 'ExecutionError']).toContain((outcome as Error).name)
        expect(await plain.client.get(resource)).toBe('someone else')
        const lock = await redlock.acquire([`${resource}:2`], 300)
        const lost = new Promise((resolve) => lock.signal.addEventListener('abort', () => resolve(lock.signal.reason), { once: true }))
        expect(await lost).toMatchObject({ name: 'LockLostError' })
      } finally {
        await plain.client.del(resource)
        await client.quit()
      }
    })

    it('locks several resources all or nothing, as node-redlock takes an array', async () => {
      const [x, y, z] = ['{m}x', '{m}y', '{m}z'].map((r) => `${r}:${adapter.name}`) as [string, string, string]
      await withRedlock({ retryCount: 0 }, async (redlock) => {
        const lock = await redlock.acquire([x, y], 5_000)
        expect(await plain.client.mget(x, y)).toEqual([lock.value, lock.value])
        await expect(redlock.acquire([y, z], 5_000)).rejects.toBeInstanceOf(ExecutionError)
        expect(await plain.client.exists(z)).toBe(0)
        await lock.release()
        expect(await plain.client.exists(x, y)).toBe(0)
      })
    })
  })
})
