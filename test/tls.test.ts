// TLS (and a password) on a real redis-server started with --tls-port, certificates made here with
// openssl (a CA, a server certificate, a client certificate the server requires). fencelock's own
// pub/sub connection must use the same TLS and auth settings as the client it was given: a waiter
// is woken by a release over TLS, within a second, with the holder's ttl at 10 s.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type Locks, type RedisClient } from '../src/index.js'
import { freePort, requireRedisOrSkip } from './support/redis-server.js'
import { closeQuietly, sleep, waitUntil } from './scenarios/fixtures/util.js'

function haveOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' })
    return true
  } catch {
    if (process.env.CI === 'true') throw new Error('[fencelock tls test] openssl is not installed: in CI this is fatal')
    console.warn('[fencelock tls test] skipping: openssl is not installed')
    return false
  }
}

describe.skipIf(!requireRedisOrSkip() || !haveOpenssl())('TLS', () => {
  let dir: string
  let server: ChildProcess
  let port: number
  const file = (name: string) => path.join(dir, name)
  const pem = (name: string) => readFileSync(file(name))
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-tls-'))
    const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' })
    ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=fencelock test CA')
    writeFileSync(file('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
    for (const who of ['server', 'client']) {
      ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${who}.key`, '-out', `${who}.csr`, '-subj', `/CN=${who}`)
      ssl('x509', '-req', '-in', `${who}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${who}.crt`, '-days', '1', '-extfile', 'san.ext')
    }
    port = await freePort()
    server = spawn('redis-server', [
      '--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1',
      '--tls-cert-file', file('server.crt'), '--tls-key-file', file('server.key'), '--tls-ca-cert-file', file('ca.crt'),
      '--tls-auth-clients', 'yes', '--requirepass', 'tls-secret', '--save', '', '--appendonly', 'no',
    ], { stdio: 'ignore' })
    const probe = new Redis({ port, host: '127.0.0.1', password: 'tls-secret', tls: { ca: pem('ca.crt'), cert: pem('client.crt'), key: pem('client.key') }, lazyConnect: true, retryStrategy: () => 100 })
    probe.on('error', () => {})
    await waitUntil('redis-server answers over TLS', async () => (await probe.ping().catch(() => '')) === 'PONG', 10_000, 100)
    probe.disconnect()
  })
  afterAll(() => {
    server?.kill('SIGKILL')
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  const clients: Record<string, () => Promise<{ raw: RedisClient; close(): Promise<void> }>> = {
    ioredis: async () => {
      const c = new Redis({ port, host: '127.0.0.1', password: 'tls-secret', tls: { ca: pem('ca.crt'), cert: pem('client.crt'), key: pem('client.key') } })
      c.on('error', () => {})
      await c.ping()
      return { raw: c, close: async () => c.disconnect() }
    },
    'node-redis': async () => {
      const c = createClient({ url: `rediss://127.0.0.1:${port}`, password: 'tls-secret', socket: { tls: true, ca: pem('ca.crt'), cert: pem('client.crt'), key: pem('client.key') } })
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
