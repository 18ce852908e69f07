// fencelock/redlock beside the originals it replaces (redlock 4.2.0 and 5.0.0-beta.2, both
// installed), on real Redis: a vote against from a client that never connected carries the
// client's own error, as node-redlock's does; a v4 lock's `resource` is an array and its
// `expiration` a whole number of ms, as v4's; a misspelt setting is refused; and a failed acquire
// leaves nothing behind on any node when it rejects, as node-redlock's own multi suite checks.
import { createRequire } from 'node:module'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import Redlock, { ExecutionError } from '../../src/compat/redlock/index.js'
import { InvalidArgumentError } from '../../src/index.js'
import { describeRedis, useFaultProxy, useIoredis, useRedis } from '../../harness/per-adapter.js'
import { freePort, requireRedisOrSkip } from '../../harness/redis-server.js'
import { sleep, until } from '../../harness/util.js'

const require = createRequire(import.meta.url)
interface V4Lock {
  resource: unknown
  expiration: number
  unlock(): Promise<void>
}
const Redlock4 = require('redlock') as new (clients: unknown[], options: object) => { lock(r: string, ttl: number): Promise<V4Lock> }
const v5 = require('redlock5') as {
  default: new (clients: unknown[], settings: object) => { acquire(r: string[], ttl: number): Promise<unknown> }
  ExecutionError: new () => Error
}
const Redlock5 = v5.default
const ExecutionError5 = v5.ExecutionError

/** An ioredis client as node-redlock's own test makes it: it never connects and does not retry. */
async function unreachableClient(): Promise<Redis> {
  const client = new Redis({
    host: '127.0.0.1',
    port: await freePort(),
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    autoResubscribe: false,
    retryStrategy: () => null,
    reconnectOnError: () => false,
  })
  client.on('error', () => {})
  await until('the client gave up connecting', () => client.status === 'end')
  return client
}

/** The messages of every vote against, over all attempts of a v5 ExecutionError. */
async function votesAgainst(error: unknown): Promise<string[]> {
  const attempts = await Promise.all((error as ExecutionError).attempts)
  return attempts.flatMap((a) => [...a.votesAgainst.values()].map((e) => e.message))
}

describe('fencelock/redlock v5 with a client that never connected', () => {
  it('each vote against carries the client’s own error, as node-redlock’s does', async () => {
    const client = await unreachableClient()
    const settings = { retryCount: 2, retryDelay: 10, retryJitter: 0 }
    const original = await new Redlock5([client], settings).acquire(['{redlock}b'], 10_000).catch((e: unknown) => e)
    expect(original).toBeInstanceOf(ExecutionError5)
    const expected = await votesAgainst(original)
    expect(expected).toContain('Connection is closed.')
    const dropIn = await new Redlock([client], settings).acquire(['{redlock}b'], 10_000).catch((e: unknown) => e)
    expect(dropIn).toBeInstanceOf(ExecutionError)
    expect((dropIn as ExecutionError).attempts.length).toBe(3)
    expect(new Set(await votesAgainst(dropIn))).toEqual(new Set(expected))
  })
})

describeRedis('fencelock/redlock beside the originals', (server) => {
  const plain = useIoredis(server)

  it('a quorum with two clients that never connected: their votes carry the client’s own error', async () => {
    const [a, b] = [await unreachableClient(), await unreachableClient()]
    const redlock = new Redlock([plain.client, a, b], { retryCount: 1, retryDelay: 10, retryJitter: 0 })
    const failed = await redlock.acquire(['quorum-unreachable'], 10_000).catch((e: unknown) => e)
    expect(failed).toBeInstanceOf(ExecutionError)
    const attempts = await Promise.all((failed as ExecutionError).attempts)
    for (const attempt of attempts) {
      expect(attempt.votesAgainst.get(a)?.message).toBe('Connection is closed.')
      expect(attempt.votesAgainst.get(b)?.message).toBe('Connection is closed.')
    }
  })

  it('v4: `resource` is an array and `expiration` whole ms, as redlock 4.2.0 gives them', async () => {
    const original = await new Redlock4([plain.client], { retryCount: 0 }).lock('v4-shape-original', 5_000)
    const dropIn = await new Redlock([plain.client], { retryCount: 0 }).lock('v4-shape-drop-in', 5_000)
    try {
      expect(original.resource).toEqual(['v4-shape-original'])
      expect(Number.isInteger(original.expiration)).toBe(true)
      expect(dropIn.resource).toEqual(['v4-shape-drop-in'])
      expect(Number.isInteger(dropIn.expiration)).toBe(true)
      expect(dropIn.expiration).toBeGreaterThan(Date.now())
      const extended = await dropIn.extend(6_000)
      expect(Number.isInteger(extended.expiration)).toBe(true)
    } finally {
      await original.unlock()
      await dropIn.unlock()
    }
  })

  it('v5: `expiration` is whole ms, as 5.0.0-beta.2 gives it', async () => {
    const lock = await new Redlock([plain.client], { retryCount: 0 }).acquire(['v5-shape'], 5_000)
    try {
      expect(lock.resources).toEqual(['v5-shape'])
      expect(Number.isInteger(lock.expiration)).toBe(true)
    } finally {
      await lock.release()
    }
  })

  it('a misspelt setting is refused, naming the setting meant', async () => {
    expect(() => new Redlock([plain.client], { retrycount: 3 } as never)).toThrow(InvalidArgumentError)
    expect(() => new Redlock([plain.client], { retrycount: 3 } as never)).toThrow(/Unknown option `retrycount`.*did you mean `retryCount`\?/)
    const redlock = new Redlock([plain.client])
    await expect(redlock.acquire(['typo'], 1_000, { retryDelai: 5 } as never)).rejects.toThrow(/`retryDelai`.*did you mean `retryDelay`\?/)
    await expect(redlock.lockWithOptions('typo', 1_000, { driftfactor: 0.1 } as never)).rejects.toThrow(/`driftfactor`.*`driftFactor`/)
  })
})

describe.skipIf(!requireRedisOrSkip())('fencelock/redlock over three nodes, one of them slow to answer', () => {
  const [a, b, c] = [useRedis(), useRedis(), useRedis()]
  const slow = useFaultProxy(a)
  const plain = [useIoredis(a), useIoredis(b), useIoredis(c)]

  it('a failed acquire rejects only once the grant of its last attempt is undone', async () => {
    const key = 'majority-fails'
    await plain[1]!.client.set(key, 'other1')
    await plain[2]!.client.set(key, 'other2')
    // Everything to and from A takes 100 ms more: a grant there comes back a round trip after the
    // others refused, and is undone then. Whatever the wait budget (retryCount x 100 ms), an
    // attempt may be on its way when it runs out: node-redlock rejects only after unlocking what
    // its last attempt was granted, so nothing of it is left on A, then or later.
    slow.setDelay(100)
    const clients = [new Redis(slow.url), new Redis(b.url), new Redis(c.url)]
    try {
      for (const retryCount of [2, 3, 4, 5, 6, 7, 8, 9]) {
        const redlock = new Redlock(clients, { retryCount, retryDelay: 100, retryJitter: 0 })
        const failed = await redlock.acquire([key], 10_000).catch((e: unknown) => e)
        expect(failed).toBeInstanceOf(ExecutionError)
        // Time itself must pass: a grant on its way lands within 2 x 100 ms and its undo within
        // 2 x 100 more; looking for 600 ms after the error covers both with room.
        const seen: (string | null)[] = []
        for (const end = performance.now() + 600; performance.now() < end; await sleep(10)) seen.push(await plain[0]!.client.get(key))
        expect(
          seen.filter((v) => v !== null),
          `retryCount ${retryCount}`,
        ).toEqual([])
      }
      expect(await plain[1]!.client.get(key)).toBe('other1')
      expect(await plain[2]!.client.get(key)).toBe('other2')
    } finally {
      slow.heal()
      for (const client of clients) client.disconnect()
      await Promise.all(plain.map((p) => p.client.del(key)))
    }
  })
})
