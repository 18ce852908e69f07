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
import { closeQuietly, sleep } from '../../harness/util.js'

describe.skipIf(!requireRedisOrSkip() || !haveOpenssl('fencelock tls test'))('TLS', () => {
  let server: TlsRedis
  let port: number
  const pem = (name: string) => server.pem(name)
  beforeAll(async () => {
    server = await startTlsRedis(['--requirepass', 'tls-secret'], { password: 'tls-secret' })
    port = server.port
  })
  afterAll(() => server?.stop())

  const clients: Record<string, () => Promise<{ raw: RedisClient; close(): Promise<void> }>> = {
    ioredis: async () => {
      const c = new Redis({ port, host: '127.0.0.1', password: 'tls-secret', tls: { ca: pem('ca.crt'), cert: pem('client.crt'), key: pem('client.key') } })
      c.on('error', () => {})
      await c.ping()
      return { raw: c, close: async () => c.disconnect() }
    },
    'node-redis': async () => {
      const c = createClient({
        url: `rediss://127.0.0.1:${port}`,
        password: 'tls-secret',
        socket: { tls: true, ca: pem('ca.crt'), cert: pem('client.crt'), key: pem('client.key') },
      })
      c.on('error', () => {})
      await c.connect()
      return { raw: c as unknown as RedisClient, close: async () => void c.destroy() }
    },
  }

  it.each(Object.keys(clients))('%s: acquire, a waiter woken by the release over TLS, fences, release', async (name) => {
    const [h, w] = [await clients[name]!(), await clients[name]!()]
    const holder: Locks = createLocks({ redis: h.raw, prefix: `tls-${name}:` })
    const waiter: Locks = createLocks({ redis: w.raw, prefix: `tls-${name}:` })
    try {
      const lease = await holder.acquire('r', { ttl: 10_000 })
      const waiting = waiter.acquire('r', { wait: 8_000 })
      await sleep(200) // the waiter has subscribed, over its own TLS connection
      const releasedAt = performance.now()
      await lease.release()
      const next = await waiting
      expect(performance.now() - releasedAt, 'woken over pub/sub, not by a 10 s re-check').toBeLessThan(1_000)
      expect(next.fence).toBeGreaterThan(lease.fence)
      await next.release()
    } finally {
      await closeQuietly([holder, waiter])
      await h.close()
      await w.close()
    }
  })
})
