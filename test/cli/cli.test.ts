// The `fencelock` command, run as a real process (node --import tsx) against a real redis-server.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pkg from '../../package.json' with { type: 'json' }
import { parseCommandLine, UsageError } from '../../src/cli/args.js'
import { cliOutcome as cli } from '../../harness/cli-process.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { until } from '../../harness/util.js'

/** A child command for `run`: node evaluating `script`. */
const node = (script: string) => [process.execPath, '-e', script]

describe('fencelock command line', () => {
  it.each<[string[], string]>([
    [['run', 'job', '--ttl', 'abc', '--', 'true'], 'Invalid --ttl value "abc"'],
    [['run', 'job', '--ttl', '0', '--', 'true'], 'Invalid --ttl value "0"'],
    [['acquire', 'job', '--wait=-5'], 'Invalid --wait value "-5"'],
    [['acquire', 'job', '--wait', '-5'], 'Invalid --wait value "-5": a duration cannot be negative'],
    [['inspect', 'job', '--redis', 'localhost:6379'], 'Invalid --redis value "localhost:6379"'],
    [['frobnicate', 'job'], 'Unknown command "frobnicate"'],
    [['acquire'], 'Missing <resource>'],
    [['inspec', 'job'], 'Unknown command "inspec": expected inspect, run, acquire, release, extend or leader (Did you mean inspect?)'],
    [['inspect', 'job', '--jsn'], "Unknown option '--jsn' (Did you mean --json?)"],
    [['run', 'job', '--semaphore', '0', '--', 'true'], 'Invalid --semaphore value "0": expected a whole number from 1 to 1000'],
    [['run', 'job', '--read', '--write', '--', 'true'], "Option '--read' cannot be used with option '--write'"],
    [['release', 'job', 'tok', '--force'], 'give either <token> or --force'],
    [['release', 'job', '--yes'], 'Missing <token>'],
    [['inspect', '--interval', '5'], 'Invalid --interval value "5": a number needs a unit'],
    [['inspect', '--tls-cert', 'c.pem'], 'Option --tls-cert needs --tls-key too'],
    [['inspect', '--client', 'jedis'], 'Invalid --client value "jedis": expected ioredis or node-redis'],
    [['run', 'job'], 'Missing command to run'],
    [['run', 'job', 'extra', '--', 'true'], 'Unexpected argument "extra" before --'],
    [['inspect', 'job', 'extra'], 'Unexpected argument "extra"'],
    [['inspect', 'job', '--ttl', '5'], 'Option --ttl does not apply to inspect'],
    [['inspect', 'job', '--bogus'], "Unknown option '--bogus'"],
    [['run', 'job', 'ls', '-l'], "Unknown option '-l': put the command to run after --"],
    [[], 'Missing command'],
    [['release', 'job'], 'Missing <token>'],
    [['release', 'job', 'tok', 'more'], 'Unexpected argument "more"'],
    [['release', 'job', 'tok', '--ttl', '5s'], 'Option --ttl does not apply to release'],
    [['extend', 'job', 'tok', '--wait', '5s'], 'Option --wait does not apply to extend'],
    [['extend', 'job', 'tok', '--ttl', 'soon'], 'Invalid --ttl value "soon"'],
    [['inspect', 'job*', '--semaphore'], 'Option --semaphore applies to one exact name'],
    [['inspect', '--read-write'], 'Option --read-write applies to one exact name'],
    [['inspect', 'job', '--semaphore', '--read-write'], "Option '--semaphore' cannot be used with option '--read-write'"],
  ])('rejects %j', (args, message) => {
    expect(() => parseCommandLine(args, {})).toThrow(UsageError)
    expect(() => parseCommandLine(args, {})).toThrow(message)
  })

  it('reads times with units, the Redis URL from --redis or REDIS_URL, and the command after --', () => {
    const connection = { redis: ['redis://127.0.0.1:6379'], prefix: undefined, cluster: false, client: undefined, user: undefined, tls: {}, maxTtl: undefined }
    expect(parseCommandLine(['run', 'job', '--ttl', '30s', '--wait', 'Infinity', '--', 'ls', '-l', '--ttl'], {})).toEqual({
      name: 'run',
      connection,
      resource: 'job',
      ttl: 30_000,
      wait: Infinity,
      hold: { kind: 'mutex' },
      command: ['ls', '-l', '--ttl'],
    })
    expect(parseCommandLine(['run', 'job', 'echo', 'hi'], {})).toMatchObject({ command: ['echo', 'hi'], ttl: undefined })
    expect(parseCommandLine(['acquire', 'job', '--ttl=2m', '--wait', '0', '--json'], { REDIS_URL: 'rediss://h:1' })).toEqual({
      name: 'acquire',
      connection: { ...connection, redis: ['rediss://h:1'] },
      resource: 'job',
      ttl: 120_000,
      wait: 0,
      json: true,
    })
    expect(parseCommandLine(['inspect', 'job', '--redis', 'redis://a:2', '--prefix', 'app:'], { REDIS_URL: 'redis://b:3' })).toEqual({
      name: 'inspect',
      connection: { ...connection, redis: ['redis://a:2'], prefix: 'app:' },
      resource: 'job',
      kind: 'mutex',
      pattern: undefined,
      json: false,
      all: false,
      watch: false,
      interval: 1_000,
    })
    expect(parseCommandLine(['inspect', 'pool', '--semaphore'], {})).toMatchObject({ name: 'inspect', resource: 'pool', kind: 'semaphore', pattern: undefined })
    expect(parseCommandLine(['inspect', 'cfg', '--read-write'], {})).toMatchObject({ name: 'inspect', resource: 'cfg', kind: 'read-write', pattern: undefined })
    expect(parseCommandLine(['inspect', '--help'], {})).toMatchObject({ name: 'help', text: expect.stringContaining('Usage: fencelock inspect') })
  })
})

describe('fencelock CLI without Redis', () => {
  it('prints help and version', async () => {
    const [help, version] = await Promise.all([cli(['--help']), cli(['--version'])])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: fencelock')
    expect(help.stdout).toMatch(/run <resource>.*-- <cmd>/)
    expect(version).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' })
  })

  it('exits 2 on bad input, naming the value', async () => {
    const [ttl, env] = await Promise.all([
      cli(['run', 'job', '--ttl', 'abc', '--', 'true']),
      cli(['inspect', 'job'], { env: { REDIS_URL: 'http://example.com' } }),
    ])
    expect(ttl).toEqual({ code: 2, stdout: '', stderr: expect.stringContaining('Invalid --ttl value "abc"') })
    expect(env).toEqual({ code: 2, stdout: '', stderr: expect.stringContaining('Invalid REDIS_URL value "http://example.com"') })
  })

  it('says which Redis it could not reach, with exit code 69 (EX_UNAVAILABLE) and no password', async () => {
    const result = await cli(['inspect', 'job', '--redis', 'redis://:hunter2@127.0.0.1:1'])
    expect(result.code).toBe(69)
    expect(result.stderr).toContain('cannot connect to Redis at redis://:***@127.0.0.1:1')
    expect(result.stderr).not.toContain('hunter2')
  })
})

describe.skipIf(!requireRedisOrSkip())('fencelock CLI', () => {
  let redis: RedisProcess
  let dir: string
  beforeAll(async () => {
    redis = await startRedis()
    dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-cli-'))
  })
  afterAll(async () => {
    await redis?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })
  const on = (...args: string[]) => cli(['--redis', redis.url, ...args])
  const inspect = async (resource: string) => JSON.parse((await on('inspect', resource, '--json')).stdout)

  it('inspect shows a free resource, then the holder that acquire printed', async () => {
    expect(await inspect('inspect-me')).toEqual({
      resource: 'inspect-me',
      held: false,
      token: null,
      fence: null,
      ttl: null,
      waiters: 0,
      holder: null,
      since: null,
      lastExtended: null,
    })
    const line = await on('inspect', 'inspect-me')
    expect(line).toEqual({ code: 0, stdout: 'inspect-me: free, last fence none, 0 waiting\n', stderr: '' })

    // Long ttls: every CLI call is a fresh process, several seconds each on a loaded machine.
    const acquired = await on('acquire', 'inspect-me', '--ttl', '2m', '--json')
    expect(acquired.code).toBe(0)
    const lease = JSON.parse(acquired.stdout)
    expect(lease).toMatchObject({ resource: 'inspect-me', ttl: 120_000, fence: expect.any(Number), token: expect.any(String) })
    const info = await inspect('inspect-me')
    // The holder is the CLI process that acquired it: its host name and pid, since the grant.
    expect(info).toMatchObject({ held: true, token: lease.token, fence: lease.fence, waiters: 0, holder: expect.stringMatching(/:\d+$/) })
    expect(info.ttl).toBeGreaterThan(10_000)
    expect(info.lastExtended).toBe(info.since)
    expect((await on('inspect', 'inspect-me')).stdout).toMatch(
      new RegExp(
        `^inspect-me: held, fence ${lease.fence}, ttl \\d+ ms, 0 waiting, token ${lease.token}, holder "[^"]+:\\d+", since ${new Date(info.since).toISOString()}\\n$`,
      ),
    )

    // Readable acquire output, and a busy lock: exit 1 once --wait runs out, naming the holder.
    const plain = await on('acquire', 'inspect-me-too', '--ttl', '5000ms')
    expect(plain.stdout).toMatch(/^token=[\w-]+ fence=\d+ ttl=5000\n$/)
    const busy = await on('acquire', 'inspect-me', '--wait', '0')
    expect(busy.code).toBe(1)
    expect(busy.stderr).toContain(`lock "inspect-me" is held by token ${lease.token}`)
  }, 60_000)

  it('release and extend take the token that acquire printed; a wrong or stale token exits 1 and changes nothing', async () => {
    // A long ttl: every CLI call is a fresh process (about a second each on a loaded machine).
    const acquired = await on('acquire', 'by-token', '--ttl', '2m', '--json')
    const { token, fence } = JSON.parse(acquired.stdout) as { token: string; fence: number }
    const wrong = await on('release', 'by-token', 'not-the-token')
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toContain('not held by that token')
    expect(await inspect('by-token')).toMatchObject({ held: true, token })

    expect((await on('extend', 'by-token', token, '--ttl', '5m')).code).toBe(0)
    expect((await inspect('by-token')).ttl).toBeGreaterThan(150_000)
    expect(await on('release', 'by-token', token)).toEqual({ code: 0, stdout: '', stderr: '' })
    expect(await inspect('by-token')).toMatchObject({ held: false, fence })

    expect((await on('release', 'by-token', token)).code).toBe(1)
    expect((await on('extend', 'by-token', token)).code).toBe(1)
    expect(await inspect('by-token')).toMatchObject({ held: false })
  }, 60_000) // nine CLI processes one after the other: about 3 s each on a loaded 2-core machine

  it('run passes resource, fence and token to the command, exits with its code and releases', async () => {
    // A lease before the run, so that there is a fence to compare with.
    const first = JSON.parse((await on('acquire', 'job', '--ttl', '1m', '--json')).stdout)
    expect((await on('release', 'job', first.token)).code).toBe(0)
    const before = await inspect('job')
    expect(before.fence).toBe(first.fence)
    const result = await on(
      'run',
      'job',
      '--',
      ...node(`
      const { FENCELOCK_RESOURCE: resource, FENCELOCK_FENCE: fence, FENCELOCK_TOKEN: token } = process.env
      console.log(JSON.stringify({ resource, fence, token }))
      process.exit(7)`),
    )
    expect(result.code).toBe(7)
    const seen = JSON.parse(result.stdout)
    expect(seen.resource).toBe('job')
    expect(seen.fence).toMatch(/^\d+$/)
    expect(seen.token).toMatch(/^[0-9a-f-]{36}$/)
    expect(Number(seen.fence)).toBeGreaterThan(before.fence)
    // Released: free at once, and the fence it handed out is the last one.
    expect(await inspect('job')).toMatchObject({ held: false, fence: Number(seen.fence) })

    const missing = await on('run', 'job', '--', 'no-such-command-fencelock')
    expect(missing.code).toBe(127)
    expect(missing.stderr).toContain('cannot run "no-such-command-fencelock"')
  }, 60_000)

  it('two concurrent runs of one resource take turns, in fence order', async () => {
    const log = path.join(dir, 'turns.log')
    const work = node(`
      const fs = require('node:fs')
      const fence = process.env.FENCELOCK_FENCE
      fs.appendFileSync(${JSON.stringify(log)}, 'start ' + fence + '\\n')
      setTimeout(() => fs.appendFileSync(${JSON.stringify(log)}, 'end ' + fence + '\\n'), 400)`)
    const results = await Promise.all([1, 2].map(() => on('run', 'turns', '--ttl', '2s', '--wait', '20s', '--', ...work)))
    expect(results.map((r) => r.code)).toEqual([0, 0])
    const lines = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(' '))
    expect(lines.map(([event]) => event)).toEqual(['start', 'end', 'start', 'end'])
    const [first, , second] = lines.map(([, fence]) => Number(fence))
    expect(lines[0]![1]).toBe(lines[1]![1])
    expect(lines[2]![1]).toBe(lines[3]![1])
    expect(second!).toBeGreaterThan(first!)
  }, 60_000)

  it('run stops the command with SIGTERM and exits 75 when the lease is lost', async () => {
    const script = node(`
      process.on('SIGTERM', () => { console.log('got SIGTERM'); process.exit(3) })
      console.log('started')
      setInterval(() => {}, 1000)`)
    let paused = false
    try {
      // Redis stops answering while the command runs: the lease cannot be extended.
      const result = await cli(['run', 'lost', '--ttl', '1s', '--redis', redis.url, '--', ...script], {
        onOutput: ({ stdout: text }) => {
          if (!paused && text.includes('started')) {
            paused = true
            redis.pause()
          }
        },
      })
      expect(paused).toBe(true)
      expect(result.code).toBe(75)
      expect(result.stdout).toContain('got SIGTERM')
      expect(result.stderr).toContain('Lost lock "lost"')
    } finally {
      redis.resume()
    }
  })

  it('run stops the command at once when an operator revokes its lock (release --force), long before its ttl', async () => {
    const script = node(`
      process.on('SIGTERM', () => { console.log('got SIGTERM'); process.exit(3) })
      console.log('started')
      setInterval(() => {}, 1000)`)
    let forced: Promise<unknown> | undefined
    // With a ttl of 10 minutes, only the revocation can end this run within the test's timeout.
    const result = await cli(['run', 'revoked', '--ttl', '10m', '--redis', redis.url, '--', ...script], {
      onOutput: ({ stdout: text }) => {
        if (forced || !text.includes('started')) return
        forced = (async () => {
          await until('the run listens for revocations', async () => Number((await redis.cli('PUBSUB', 'NUMSUB', 'fencelock:revoked')).split('\n').at(-1)) >= 1)
          return cli(['release', 'revoked', '--force', '--yes', '--redis', redis.url])
        })()
      },
    })
    expect(await forced).toMatchObject({ code: 0 })
    expect(result.code).toBe(75)
    expect(result.stdout).toContain('got SIGTERM')
    expect(result.stderr).toContain('revoked')
  }, 60_000)
})

describe('fencelock command line: durations (one parser with the library)', () => {
  it.each<[string[], string]>([
    [['acquire', 'job', '--ttl', '30'], 'Invalid --ttl value "30": a number needs a unit: 30s for seconds, 30ms for milliseconds'],
    [['run', 'job', '--wait', '5', '--', 'true'], 'Invalid --wait value "5": a number needs a unit: 5s for seconds'],
    [['extend', 'job', 'tok', '--ttl', '1m30'], 'Invalid --ttl value "1m30": 30 has no unit'],
    [['acquire', 'job', '--ttl', '30s1m'], 'largest to smallest'],
    [['acquire', 'job', '--ttl', '1.5ms'], 'not a whole number of milliseconds'],
    [['acquire', 'job', '--ttl', '50ms'], 'Invalid --ttl value "50ms": expected at least 100ms'],
    [['acquire', 'job', '--ttl', '25d'], 'Invalid --ttl value "25d": expected at most 24d'],
    [['acquire', 'job', '--wait', '25d'], 'Invalid --wait value "25d": expected at most 24d, or Infinity'],
    [['acquire', 'job', '--ttl', 'Infinity'], 'Invalid --ttl value "Infinity": expected a finite duration'],
  ])('refuses %j', (args, message) => {
    expect(() => parseCommandLine(args, {})).toThrow(UsageError)
    expect(() => parseCommandLine(args, {})).toThrow(message)
  })

  it('reads --ttl and --wait with the shared parser: decimals, compound units, hours and days', () => {
    expect(parseCommandLine(['acquire', 'job', '--ttl', '1m30s', '--wait', '1.5s'], {})).toMatchObject({ ttl: 90_000, wait: 1_500 })
    expect(parseCommandLine(['run', 'job', '--ttl', '1h', '--wait', '2d', '--', 'true'], {})).toMatchObject({ ttl: 3_600_000, wait: 172_800_000 })
    expect(parseCommandLine(['acquire', 'job', '--wait', '0', '--ttl', '250ms'], {})).toMatchObject({ ttl: 250, wait: 0 })
    expect(parseCommandLine(['acquire', 'job', '--wait', 'inf'], {})).toMatchObject({ wait: Infinity })
    expect(parseCommandLine(['extend', 'job', 'tok', '--ttl=0.5s'], {})).toMatchObject({ ttl: 500 })
  })

  it('--ttl 30 exits 2 before connecting, and --help says a number needs a unit', async () => {
    const [bare, help] = await Promise.all([cli(['acquire', 'job', '--ttl', '30', '--redis', 'redis://127.0.0.1:1']), cli(['--help'])])
    expect(bare.code).toBe(2)
    expect(bare.stderr).toContain('Invalid --ttl value "30": a number needs a unit')
    expect(help.stdout).toContain('1m30s')
    expect(help.stdout).toMatch(/a number needs a unit/)
  })
})
