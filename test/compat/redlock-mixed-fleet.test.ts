// A fleet half moved over: node-redlock v4, v5 and the @sesamecare-oss fork, and the drop-in
// fencelock/redlock, each on clients of its own, contend for one resource and do a read-modify-
// write of a counter under the lock, with delays inside the critical section that an unguarded
// interleaving would lose updates in. The drop-in keeps node-redlock's layout (the resource's name
// holds the lock's value), so every holder excludes every other: no update is lost.
import { Redis } from 'ioredis'
import { createRequire } from 'node:module'
import { expect, it } from 'vitest'
import { describeRedis } from '../../harness/per-adapter.js'
import DropIn from '../../src/compat/redlock/index.js'
import { sleep } from '../../harness/until.js'

const require = createRequire(import.meta.url)
const RedlockV4 = require('redlock') as new (clients: unknown[], options: object) => { lock(r: string, ttl: number): Promise<{ unlock(): Promise<void> }> }
const RedlockV5 = (require('redlock5') as { default: new (clients: unknown[], settings: object) => V5 }).default
const Fork = (require('@sesamecare-oss/redlock') as { Redlock: new (clients: unknown[], settings: object) => V5 }).Redlock

interface V5 {
  acquire(resources: string[], ms: number): Promise<{ release(): Promise<unknown> }>
}

const RESOURCE = 'orders:42'
const ROUNDS = 12

/** One worker: ROUNDS times, lock, read the counter, wait, write it + 1, unlock. */
async function work(lock: () => Promise<() => Promise<unknown>>, redis: Redis): Promise<void> {
  for (let i = 0; i < ROUNDS; i++) {
    const unlock = await lock()
    const value = Number((await redis.get('counter')) ?? '0')
    await sleep(2 + Math.random() * 4)
    await redis.set('counter', String(value + 1))
    await unlock()
  }
}

describeRedis('mixed fleet: node-redlock v4, v5, the fork and the drop-in on one resource', (server) => {
  it('loses no update of a counter written under the lock', { timeout: 20_000 }, async () => {
    const clients = Array.from({ length: 9 }, () => new Redis(server.url))
    const [data, ...c] = clients as [Redis, ...Redis[]]
    const settings = { retryCount: -1, retryDelay: 20, retryJitter: 10 }
    const v4 = new RedlockV4([c[0]], settings)
    const v5 = new RedlockV5([c[1]], settings)
    const fork = new Fork([c[2]], settings)
    const dropIns = [new DropIn([c[3]!], settings), new DropIn([c[4]!], settings), new DropIn([c[5]!], settings)]
    const fences: number[] = []
    try {
      await data.del('counter')
      await Promise.all([
        work(async () => {
          const l = await v4.lock(RESOURCE, 2_000)
          return () => l.unlock()
        }, c[6]!),
        work(async () => {
          const l = await v5.acquire([RESOURCE], 2_000)
          return () => l.release()
        }, c[6]!),
        work(async () => {
          const l = await fork.acquire([RESOURCE], 2_000)
          return () => l.release()
        }, c[7]!),
        ...dropIns.map((d, i) =>
          work(
            async () => {
              const l = await (i === 0 ? d.lock(RESOURCE, 2_000) : d.acquire([RESOURCE], 2_000))
              fences.push(l.fence ?? -1)
              return () => (i === 0 ? l.unlock() : l.release())
            },
            clients[8 - (i % 2)]!,
          ),
        ),
      ])
      expect(Number(await data.get('counter'))).toBe(6 * ROUNDS)
      // The drop-in's holders got fences in the order they held the lock.
      expect(fences).toEqual([...fences].sort((a, b) => a - b))
      expect(new Set(fences).size).toBe(fences.length)
      expect(await data.exists(RESOURCE)).toBe(0)
    } finally {
      for (const client of clients) client.disconnect()
    }
  })
})
