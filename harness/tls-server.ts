// A redis-server that speaks only TLS and requires a client certificate, with certificates made
// by openssl for the test (a CA, a server certificate, a client certificate).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Redis } from 'ioredis'
import { until } from './util.js'
import { freePort } from './redis-server.js'

/** True if openssl runs; false with a printed reason outside CI; throws in CI. */
export function haveOpenssl(label: string): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' })
    return true
  } catch {
    if (process.env.CI === 'true') throw new Error(`[${label}] openssl is not installed: in CI this is fatal`)
    console.warn(`[${label}] skipping: openssl is not installed`)
    return false
  }
}

export interface TlsRedis {
  port: number
  /** Path of a file made for the test: ca.crt, server.crt/.key, client.crt/.key. */
  file(name: string): string
  /** Contents of such a file. */
  pem(name: string): Buffer
  /** SIGSTOP: the kernel still accepts connections, the server answers nothing (not even TLS). */
  pause(): void
  /** SIGCONT */
  resume(): void
  stop(): void
}

/**
 * Starts the server with `auth` (redis-server arguments such as `--requirepass x` or `--user ...`)
 * and waits until a client with the client certificate and `probe` credentials gets PONG.
 */
export async function startTlsRedis(auth: string[], probe: { username?: string; password: string }): Promise<TlsRedis> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-tls-'))
  const file = (name: string) => path.join(dir, name)
  const pem = (name: string) => readFileSync(file(name))
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' })
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=fencelock test CA')
  writeFileSync(file('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
  for (const who of ['server', 'client']) {
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${who}.key`, '-out', `${who}.csr`, '-subj', `/CN=${who}`)
    ssl('x509', '-req', '-in', `${who}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${who}.crt`, '-days', '1', '-extfile', 'san.ext')
  }
  const port = await freePort()
  const server: ChildProcess = spawn(
    'redis-server',
    [
      '--port',
      '0',
      '--tls-port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--tls-cert-file',
      file('server.crt'),
      '--tls-key-file',
      file('server.key'),
      '--tls-ca-cert-file',
      file('ca.crt'),
      '--tls-auth-clients',
      'yes',
      '--save',
      '',
      '--appendonly',
      'no',
      ...auth,
    ],
    { stdio: 'ignore' },
  )
  const stop = () => {
    server.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
  const client = new Redis({
    port,
    host: '127.0.0.1',
    ...probe,
    tls: { ca: pem('ca.crt'), cert: pem('client.crt'), key: pem('client.key') },
    lazyConnect: true,
    retryStrategy: () => 100,
  })
  client.on('error', () => {})
  try {
    await until('redis-server answers over TLS', async () => (await client.ping().catch(() => '')) === 'PONG', { timeout: 10_000, every: 100 })
  } catch (err) {
    stop()
    throw err
  } finally {
    client.disconnect()
  }
  return { port, file, pem, stop, pause: () => void server.kill('SIGSTOP'), resume: () => void server.kill('SIGCONT') }
}
