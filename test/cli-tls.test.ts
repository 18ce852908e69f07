// The `fencelock` command over TLS with an ACL user: a redis-server with --tls-port that requires a
// client certificate, certificates made here with openssl (as in test/tls.test.ts), a user with a
// password. The password comes from REDIS_PASSWORD and never shows in the output.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, requireRedisOrSkip } from './support/redis-server.js'
import { waitUntil } from './scenarios/fixtures/util.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const cliPath = path.join(root, 'src', 'cli', 'main.ts')
const PASSWORD = 'tls-ops-secret'

function haveOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' })
    return true
  } catch {
    if (process.env.CI === 'true') throw new Error('[fencelock cli tls test] openssl is not installed: in CI this is fatal')
    console.warn('[fencelock cli tls test] skipping: openssl is not installed')
    return false
  }
}

function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const merged = { ...process.env, ...env }
  if (!('REDIS_URL' in env)) delete merged.REDIS_URL
  const child = spawn(process.execPath, ['--import', 'tsx', cliPath, ...args], { cwd: root, env: merged })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })))
}

describe.skipIf(!requireRedisOrSkip() || !haveOpenssl())('fencelock CLI over TLS with an ACL user', () => {
  let dir: string
  let server: ChildProcess
  let port: number
  const file = (name: string) => path.join(dir, name)
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-cli-tls-'))
    const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' })
    ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=fencelock cli test CA')
    writeFileSync(file('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
    for (const who of ['server', 'client']) {
      ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${who}.key`, '-out', `${who}.csr`, '-subj', `/CN=${who}`)
      ssl('x509', '-req', '-in', `${who}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${who}.crt`, '-days', '1', '-extfile', 'san.ext')
    }
    port = await freePort()
    server = spawn('redis-server', [
      '--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1',
      '--tls-cert-file', file('server.crt'), '--tls-key-file', file('server.key'), '--tls-ca-cert-file', file('ca.crt'),
      '--tls-auth-clients', 'yes', '--save', '', '--appendonly', 'no',
      // An operator's user; the default user is off.
      '--user', 'default', 'off',
      '--user', 'ops', 'on', `>${PASSWORD}`, '~*', '&*', '+@all',
    ], { stdio: 'ignore' })
    const tls = { ca: readFileSync(file('ca.crt')), cert: readFileSync(file('client.crt')), key: readFileSync(file('client.key')) }
    const probe = new Redis({ port, host: '127.0.0.1', username: 'ops', password: PASSWORD, tls, lazyConnect: true, retryStrategy: () => 100 })
    probe.on('error', () => {})
    await waitUntil('redis-server answers over TLS', async () => (await probe.ping().catch(() => '')) === 'PONG', 10_000, 100)
    probe.disconnect()
  })
  afterAll(() => {
    server?.kill('SIGKILL')
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  const tlsFlags = () => ['--redis', `rediss://127.0.0.1:${port}`, '--tls-ca', file('ca.crt'), '--tls-cert', file('client.crt'), '--tls-key', file('client.key'), '--user', 'ops']

  it('run (node-redis) and inspect (ioredis) over rediss:// with --tls-ca, a client certificate, --user and REDIS_PASSWORD; a wrong password exits 1 and is never printed', async () => {
    const env = { REDIS_PASSWORD: PASSWORD }
    const script = [process.execPath, '-e', 'console.log(process.env.FENCELOCK_FENCE)']
    const [ran, listed, wrong, noCa] = await Promise.all([
      cli([...tlsFlags(), '--client', 'node-redis', 'run', 'tls-job', '--', ...script], env),
      cli([...tlsFlags(), 'inspect', 'tls-job', '--json'], env),
      cli([...tlsFlags(), 'inspect', 'tls-job'], { REDIS_PASSWORD: 'not-the-password' }),
      cli(['--redis', `rediss://ops:${PASSWORD}@127.0.0.1:${port}`, 'inspect', 'tls-job'], {}),
    ])
    expect(ran.stderr).toBe('')
    expect(ran).toMatchObject({ code: 0, stdout: expect.stringMatching(/^\d+\n$/) })
    expect(listed.code).toBe(0)
    expect(JSON.parse(listed.stdout)).toMatchObject({ resource: 'tls-job', waiters: 0 })
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toContain(`cannot connect to Redis at rediss://127.0.0.1:${port}`)
    expect(wrong.stderr).toMatch(/WRONGPASS|invalid username-password/i)
    expect(wrong.stderr).not.toContain('not-the-password')
    // Without the CA the server's certificate is not trusted; the URL's password is redacted.
    expect(noCa.code).toBe(1)
    expect(noCa.stderr).toContain(`rediss://ops:***@127.0.0.1:${port}`)
    expect(noCa.stderr).not.toContain(PASSWORD)
    // The run's fence is the resource's last fence.
    expect((await cli([...tlsFlags(), 'inspect', 'tls-job', '--json'], env)).stdout).toContain(`"fence":${ran.stdout.trim()}`)
  }, 60_000)
})
