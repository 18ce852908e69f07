// The `fencelock` command over TLS with an ACL user: a redis-server with --tls-port that requires a
// client certificate, certificates made here with openssl (as in test/redis/tls.test.ts), a user with a
// password. The password comes from REDIS_PASSWORD and never shows in the output.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cliOutcome } from '../../harness/cli-process.js'
import { requireRedisOrSkip } from '../../harness/redis-server.js'
import { haveOpenssl, startTlsRedis, type TlsRedis } from '../../harness/tls-server.js'

const PASSWORD = 'tls-ops-secret'

const cli = (args: string[], env: NodeJS.ProcessEnv) => cliOutcome(args, { env })

describe.skipIf(!requireRedisOrSkip() || !haveOpenssl('fencelock cli tls test'))('fencelock CLI over TLS with an ACL user', () => {
  let server: TlsRedis
  let port: number
  const file = (name: string) => server.file(name)
  beforeAll(async () => {
    // An operator's user; the default user is off.
    server = await startTlsRedis(['--user', 'default', 'off', '--user', 'ops', 'on', `>${PASSWORD}`, '~*', '&*', '+@all'], {
      username: 'ops',
      password: PASSWORD,
    })
    port = server.port
  })
  afterAll(() => server?.stop())

  const tlsFlags = () => [
    '--redis',
    `rediss://127.0.0.1:${port}`,
    '--tls-ca',
    file('ca.crt'),
    '--tls-cert',
    file('client.crt'),
    '--tls-key',
    file('client.key'),
    '--user',
    'ops',
  ]

  it('run (node-redis) and inspect (ioredis) over rediss:// with --tls-ca, a client certificate, --user and REDIS_PASSWORD; a wrong password exits 77 and is never printed', async () => {
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
    expect(wrong.code).toBe(77)
    expect(wrong.stderr).toContain(`cannot connect to Redis at rediss://127.0.0.1:${port}`)
    expect(wrong.stderr).toMatch(/WRONGPASS|invalid username-password/i)
    expect(wrong.stderr).not.toContain('not-the-password')
    // Without the CA the server's certificate is not trusted; the URL's password is redacted.
    expect(noCa.code).toBe(69)
    expect(noCa.stderr).toContain(`rediss://ops:***@127.0.0.1:${port}`)
    expect(noCa.stderr).not.toContain(PASSWORD)
    // The run's fence is the resource's last fence.
    expect((await cli([...tlsFlags(), 'inspect', 'tls-job', '--json'], env)).stdout).toContain(`"fence":${ran.stdout.trim()}`)
  }, 60_000)

  it('a server that takes the connection but never answers (not even the TLS handshake) exits 69 within seconds, with both clients', async () => {
    const env = { REDIS_PASSWORD: PASSWORD }
    server.pause()
    try {
      const results = await Promise.all(['ioredis', 'node-redis'].map((client) => cli([...tlsFlags(), '--client', client, 'inspect', 'tls-job'], env)))
      for (const result of results) {
        expect(result).toMatchObject({
          code: 69,
          stdout: '',
          stderr: expect.stringContaining(`Redis at rediss://127.0.0.1:${port} did not answer within 5000 ms`),
        })
      }
    } finally {
      server.resume()
    }
  }, 60_000)
})
