// Valkey GLIDE, the third client adapter: what is GLIDE's own. The per-client suites run with it
// too (vitest.config.ts, project `with-glide`: ioredis, node-redis and GLIDE in one pass); this file checks what only GLIDE does: its rewritten
// error messages, its own factory for the wake-up client, its resubscription after a reconnect
// (no event, read from its statistics), and that fencelock closes what it made.
import { GlideClient, Logger } from '@valkey/valkey-glide'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ClosedError, createLocks, InvalidArgumentError, RedisError } from '../../src/index.js'
import { glideReplyError } from '../../src/redis/glide.js'
import { glideAddress } from '../../harness/clients.js'
import { startFaultProxy } from '../../harness/fault-proxy.js'
import { scriptCalls } from '../../harness/commandstats.js'
import { describeRedis } from '../../harness/per-adapter.js'
import { recordAcquires } from '../../harness/telemetry.js'
import { uniquePrefix, until } from '../../harness/util.js'

describe("GLIDE's error replies, as Redis wrote them", () => {
  // GLIDE's RequestError, by name: the class the adapter reads (its subclasses are no reply at all).
  class RequestError extends Error {}
  const reply = (message: string) => glideReplyError(new RequestError(message)) as Error

  it('puts the Redis code back in front, keeps the original as cause, and leaves errors that are no reply alone', () => {
    const cases: [string, string][] = [
      ['An error was signalled by the server: - NoScriptError: No matching script. Please use EVAL.', 'NOSCRIPT No matching script. Please use EVAL.'],
      [
        "An error was signalled by the server: - PermissionDenied: this user has no permissions to run the 'evalsha' command",
        "NOPERM this user has no permissions to run the 'evalsha' command",
      ],
      ['An error was signalled by the server: - ResponseError: user_script:1: attempt to index a nil value', 'ERR user_script:1: attempt to index a nil value'],
      ['WRONGTYPE: Operation against a key holding the wrong kind of value', 'WRONGTYPE Operation against a key holding the wrong kind of value'],
      ['An error was signalled by the server: - BusyLoadingError: Redis is loading the dataset in memory', 'LOADING Redis is loading the dataset in memory'],
      // Redirections GLIDE gave up following: transient codes (isPermanentReplyError), not refusals.
      ['An error was signalled by the server: - Moved: 1649 127.0.0.1:43899', 'MOVED 1649 127.0.0.1:43899'],
      ['An error was signalled by the server: - Ask: 1649 127.0.0.1:41521', 'ASK 1649 127.0.0.1:41521'],
    ]
    for (const [glide, redis] of cases) {
      const err = reply(glide)
      expect(err.message).toBe(redis)
      expect(err.name).toBe('ReplyError')
      expect((err.cause as Error).message).toBe(glide)
    }
    class TimeoutError extends RequestError {}
    const timeout = new TimeoutError('timed out')
    expect(glideReplyError(timeout)).toBe(timeout)
    const plain = new Error('x')
    expect(glideReplyError(plain)).toBe(plain)
  })
})

describeRedis('Valkey GLIDE client', (server) => {
  let client: GlideClient
  const acquires = recordAcquires()
  /** Why the acquires of `resource` looked again after waiting, without a first wait's `subscribed` look. */
  const wakes = (resource: string) => acquires.wakes(resource).filter((w) => w !== 'subscribed')
  beforeAll(async () => {
    Logger.setLoggerConfig('off')
    client = await GlideClient.createClient({ addresses: [glideAddress(server.url)], requestTimeout: 5_000 })
  })
  afterAll(() => {
    acquires.stop()
    return client?.close()
  })
  /**
   * Until the waiter (on `locks`) has sent both its first attempt and the look it takes once its
   * channel is subscribed, and has its answers: `calls` script calls in all since the stats were
   * reset (the holder's acquire and those two), then a call of the waiter's own, answered after
   * them on its connection. A release before that look was answered could be seen by the look
   * itself (no wake-up at all), and one during a cut connection would fail it (a retry, not a wake-up).
   */
  const untilLooked = async (locks: { inspect(resource: string): Promise<{ waiters: number }> }, resource: string, calls: number) => {
    await until('the waiter looked again once subscribed', async () => (await scriptCalls(server.redis)) >= calls)
    expect((await locks.inspect(resource)).waiters).toBe(1)
  }

  const pubsubClients = async () => {
    const list = String(await client.customCommand(['CLIENT', 'LIST']))
    return list.split('\n').filter((line) => / sub=[1-9]/.test(line)).length
  }

  it('runs the scripts after SCRIPT FLUSH (NOSCRIPT read through GLIDE message), and gives a fence per grant', async () => {
    const locks = createLocks({ redis: client, prefix: uniquePrefix('glide-noscript') })
    try {
      const first = await locks.acquire('r', { ttl: 5_000 })
      await first.release()
      await client.customCommand(['SCRIPT', 'FLUSH'])
      const second = await locks.acquire('r', { ttl: 5_000 })
      expect(second.fence).toBeGreaterThan(first.fence)
      expect(await second.release()).toBe(true)
    } finally {
      await locks.close()
    }
  })

  it('wakes a waiter through its own pub/sub client, made from the options of the user client, and closes it with the instance', async () => {
    const prefix = uniquePrefix('glide-wake')
    const holder = createLocks({ redis: client, prefix })
    const waiter = createLocks({ redis: client, prefix })
    try {
      const before = await pubsubClients()
      await client.customCommand(['CONFIG', 'RESETSTAT'])
      const held = await holder.acquire('w', { ttl: 30_000 })
      const waiting = waiter.acquire('w', { ttl: 5_000, wait: 10_000 })
      await until('the waiter subscribed', async () => (await pubsubClients()) > before, { timeout: 5_000, every: 5 })
      await untilLooked(waiter, 'w', 3)
      await held.release()
      const lease = await waiting
      // Woken by the release, not by a re-check after the holder's ttl of 30 s.
      expect(wakes('w')).toEqual(['release'])
      await lease.release()
    } finally {
      await Promise.all([holder.close(), waiter.close()])
    }
    await until('the wake-up client closed', async () => (await pubsubClients()) === 0, { timeout: 5_000, every: 20 })
  })

  it('after a reconnect GLIDE resubscribes by itself; the waiter looks again at once instead of after the holder ttl', async () => {
    const prefix = uniquePrefix('glide-resync')
    const proxy = await startFaultProxy(server.redis)
    const behind = await GlideClient.createClient({ addresses: [glideAddress(proxy.url)], requestTimeout: 5_000 })
    const holder = createLocks({ redis: client, prefix })
    const waiter = createLocks({ redis: behind, prefix })
    try {
      await client.customCommand(['CONFIG', 'RESETSTAT'])
      const held = await holder.acquire('k', { ttl: 30_000 })
      const waiting = waiter.acquire('k', { ttl: 5_000, wait: 25_000 })
      // The waiter's wake-up channel (under the resource's hash tag; the holder listens for revocations too).
      const wakeChannels = async () => ((await client.customCommand(['PUBSUB', 'CHANNELS', `${prefix}{*`])) as unknown[]).length
      await until('the waiter subscribed', async () => (await wakeChannels()) > 0, { timeout: 5_000, every: 5 })
      await untilLooked(waiter, 'k', 3)
      // Released while the waiter's connections are cut (Redis has dropped its subscriber): its
      // wake-up message is lost.
      proxy.partition()
      await until('Redis dropped the waiter subscriber', async () => (await wakeChannels()) === 0)
      await held.release()
      proxy.heal()
      const lease = await waiting
      // GLIDE reconnects and resubscribes within its backoff, and the resync wakes the waiter.
      // Without it, the waiter would sleep until its re-check, the holder's ttl (30 s).
      expect(wakes('k')).toEqual(['resync'])
      await lease.release()
    } finally {
      await Promise.all([holder.close(), waiter.close()])
      behind.close()
      await proxy.close()
    }
  })

  it('a closed GLIDE client: createLocks refuses it with ClosedError; a non-client is refused naming GLIDE among the clients', async () => {
    const closed = await GlideClient.createClient({ addresses: [glideAddress(server.url)] })
    closed.close()
    expect(() => createLocks({ redis: closed })).toThrow(ClosedError)
    expect(() => createLocks({ redis: { customCommand() {} } as never })).toThrow(InvalidArgumentError)
    expect(() => createLocks({ redis: { customCommand() {} } as never })).toThrow(/GLIDE/)
  })

  it('a user without EVALSHA: RedisError naming NOPERM, as with the other clients', async () => {
    await client.customCommand(['ACL', 'SETUSER', 'glide-noeval', 'reset', 'on', '>pw', '~*', '&*', '+@all', '-eval', '-evalsha'])
    const limited = await GlideClient.createClient({ addresses: [glideAddress(server.url)], credentials: { username: 'glide-noeval', password: 'pw' } })
    const locks = createLocks({ redis: limited, prefix: uniquePrefix('glide-acl') })
    try {
      const err = await locks.acquire('a', { ttl: 1_000, wait: 1_000 }).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(RedisError)
      expect((err as Error).message).toMatch(/NOPERM/)
    } finally {
      await locks.close()
      limited.close()
      await client.customCommand(['ACL', 'DELUSER', 'glide-noeval'])
    }
  })
})
