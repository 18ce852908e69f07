// TLS (and a password) on a real redis-server started with --tls-port, certificates made here with
// openssl (a CA, a server certificate, a client certificate the server requires). fencelock's own
// pub/sub connection must use the same TLS and auth settings as the client it was given: a waiter
// is woken by a release over TLS, within a second, with the holder's ttl at 10 s.
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type Locks, type RedisClient } from '../../src/index.js'
import { requireRedisOrSkip } from '../../harness/redis-server.js'
import { haveOpenssl, startTlsRedis, type TlsRedis } from '../../harness/tls-server.js'
import { recordAcquires } from '../../harness/telemetry.js'
import { closeQuietly, until } from '../../harness/util.js'

describe.skipIf(!requireRedisOrSkip() || !haveOpenssl('fencelock tls test'))('TLS', () => {
  let server: TlsRedis
  let port: number
  const pem = (name: string) => server.pem(name)
  beforeAll(async () => {
    server = await startTlsRedis(['--requirepass', 'tls-secret'], { password: 'tls-secret' })
    port = server.port
  })
  afterAll(() => server?.stop())

  /** A connected client; `channels(pattern)` is PUBSUB CHANNELS sent through it, `command` any command. */
  const clients: Record<
    string,
    () => Promise<{ raw: RedisClient; channels(pattern: string): Promise<unknown[]>; command(...args: string[]): Promise<unknown>; close(): Promise<void> }>
  > = {
    ioredis: async () => {
      const c = new Redis({ port, host: '127.0.0.1', password: 'tls-secret', tls: { ca: pem('ca.crt'), cert: pem('client.crt'), key: pem('client.key') } })
      c.on('error', () => {})
      await c.ping()
      return {
        raw: c,
        channels: async (pattern) => (await c.call('PUBSUB', 'CHANNELS', pattern)) as unknown[],
        command: (...args) => c.call(args[0]!, ...args.slice(1)),
        close: async () => c.disconnect(),
      }
    },
    'node-redis': async () => {
      const c = createClient({
        url: `rediss://127.0.0.1:${port}`,
        password: 'tls-secret',
        socket: { tls: true, ca: pem('ca.crt'), cert: pem('client.crt'), key: pem('client.key') },
      })
      c.on('error', () => {})
      await c.connect()
      return {
        raw: c as unknown as RedisClient,
        channels: async (pattern) => (await c.sendCommand(['PUBSUB', 'CHANNELS', pattern])) as unknown[],
        command: (...args) => c.sendCommand(args),
        close: async () => void c.destroy(),
      }
    },
  }

  it.each(Object.keys(clients))('%s: acquire, a waiter woken by the release over TLS, fences, release', async (name) => {
    const [h, w] = [await clients[name]!(), await clients[name]!()]
    const holder: Locks = createLocks({ redis: h.raw, prefix: `tls-${name}:` })
    const waiter: Locks = createLocks({ redis: w.raw, prefix: `tls-${name}:` })
    const acquires = recordAcquires()
    try {
      const lease = await holder.acquire('r', { ttl: 10_000 })
      await h.command('CONFIG', 'RESETSTAT')
      const waiting = waiter.acquire('r', { wait: 8_000 })
      // The waiter is in line and has subscribed, over its own TLS connection, and both of its
      // looks ran (the first, and the one once subscribed: a release while that one is in flight
      // could let it find the lock free, woken by no message).
      const scripts = async () => {
        const info = String(await h.command('INFO', 'commandstats'))
        return ['evalsha', 'eval'].reduce((sum, c) => sum + Number(new RegExp(`^cmdstat_${c}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0), 0)
      }
      await until('the waiter is in line and subscribed, its two looks done', async () => {
        if ((await scripts()) < 2) return false
        return (await h.channels(`tls-${name}:{r}:W*`)).length === 1
      })
      await lease.release()
      const next = await waiting
      expect(
        acquires.wakes('r').filter((why) => why !== 'subscribed'),
        'woken over pub/sub, not by a 10 s re-check',
      ).toEqual(['release'])
      expect(next.fence).toBeGreaterThan(lease.fence)
      await next.release()
    } finally {
      acquires.stop()
      await closeQuietly([holder, waiter])
      await h.close()
      await w.close()
    }
  })
})
