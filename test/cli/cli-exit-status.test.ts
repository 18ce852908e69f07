// The `fencelock` command's exit statuses, one per outcome a script branches on (sysexits-style, as
// flock(1) and consul lock): 1 the lock is held (and by whom), 69 Redis unreachable, 77 Redis
// refused the credentials or a command. Real processes against real redis-servers, with ioredis
// and node-redis. (2 for a missing client library: cli-operator.test.ts; 69 for a Redis that
// never answers: cli-unanswered.test.ts; 75: cli.test.ts.)
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type Locks } from '../../src/index.js'
import { cli } from '../../harness/cli-process.js'
import { freePort, requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { closeQuietly, uniquePrefix } from '../../harness/util.js'

const CLIENTS = ['ioredis', 'node-redis'] as const

describe('fencelock --help', () => {
  it('lists every exit status and points to documentation the package ships (its README), not docs/cli.md', async () => {
    const help = await cli(['--help'])
    expect(help.code).toBe(0)
    for (const status of ['0 ', '1 ', '2 ', '69 ', '75 ', '77 ', '126 ', '128+n '])
      expect(help.stdout).toMatch(new RegExp(`^ {2}${status.replace('+', '\\+')}`, 'm'))
    expect(help.stdout).toMatch(/the lock is held/)
    expect(help.stdout).toMatch(/Redis could not be reached|did not answer/)
    expect(help.stdout).not.toContain('docs/cli.md')
    expect(help.stdout).toMatch(/README\.md.*"Command line"/s)
  })
})

describe.skipIf(!requireRedisOrSkip())('fencelock CLI exit statuses', () => {
  let redis: RedisProcess
  let guarded: RedisProcess
  let client: Redis
  let locks: Locks
  const prefix = uniquePrefix('cli-exit')
  beforeAll(async () => {
    // `guarded`: the default user may run everything but scripts; `ops` has a password.
    ;[redis, guarded] = await Promise.all([
      startRedis(),
      startRedis({
        args: [
          '--user',
          'default',
          'on',
          'nopass',
          '~*',
          '&*',
          '+@all',
          '-eval',
          '-evalsha',
          '-fcall',
          '--user',
          'ops',
          'on',
          '>ops-secret',
          '~*',
          '&*',
          '+@all',
        ],
      }),
    ])
    client = new Redis(redis.url, { lazyConnect: true })
    await client.connect()
    locks = createLocks({ redis: client, prefix })
  })
  afterAll(async () => {
    await closeQuietly([locks])
    client?.disconnect()
    await Promise.all([redis?.stop(), guarded?.stop()])
  })
  const on = (...args: string[]) => cli(['--redis', redis.url, '--prefix', prefix, ...args])

  it.each(CLIENTS)(
    'a held lock with --wait 0 exits 1 and says who holds it: a lock, a semaphore, a read/write lock (--client %s)',
    async (name) => {
      const held = await locks.acquire(`busy-${name}`, { ttl: 60_000 })
      const permit = await locks.semaphore(`pool-${name}`, { limit: 1 }).acquire({ ttl: 60_000 })
      const writer = await locks.readWrite(`cfg-${name}`).write({ ttl: 60_000 })
      try {
        const [acquired, ran, sem, read] = await Promise.all([
          on('--client', name, 'acquire', `busy-${name}`, '--wait', '0'),
          on('--client', name, 'run', `busy-${name}`, '--wait', '0', '--', 'echo', 'ran'),
          on('--client', name, 'run', `pool-${name}`, '--semaphore', '1', '--wait', '0', '--', 'echo', 'ran'),
          on('--client', name, 'run', `cfg-${name}`, '--read', '--wait', '0', '--', 'echo', 'ran'),
        ])
        for (const result of [acquired, ran]) {
          expect(result).toMatchObject({ code: 1, stdout: '' })
          expect(result.stderr).toContain(`lock "busy-${name}" is held by token ${held.token} (fence ${held.fence}, `)
          // Who holds it: the holding instance's label (this test process: hostname:pid).
          expect(result.stderr).toMatch(new RegExp(`is held by token ${held.token} \\(fence ${held.fence}, [\\d.]+s left, holder "[^"]+:${process.pid}"\\)`))
          expect(result.stderr).toContain('--wait 0')
          expect(result.stderr).not.toContain('Timed out')
        }
        expect(sem).toMatchObject({ code: 1, stdout: '' })
        expect(sem.stderr).toContain(`semaphore "pool-${name}" is held by 1 of 1 permits: token ${permit.token} (`)
        expect(read).toMatchObject({ code: 1, stdout: '' })
        expect(read.stderr).toContain(`read/write lock "cfg-${name}" is held by token ${writer.token} (write, fence ${writer.fence}, `)
      } finally {
        await Promise.all([held.release(), permit.release(), writer.release()])
      }
    },
    60_000,
  )

  it('a lock still held when --wait runs out exits 1, saying how long it waited and who holds it', async () => {
    const held = await locks.acquire('busy-wait', { ttl: 60_000 })
    try {
      const result = await on('acquire', 'busy-wait', '--wait', '300ms')
      expect(result).toMatchObject({ code: 1, stdout: '' })
      expect(result.stderr).toMatch(new RegExp(`lock "busy-wait" is still held after waiting \\d+ ms, by token ${held.token} \\(fence ${held.fence}, `))
    } finally {
      await held.release()
    }
  }, 60_000)

  it.each(CLIENTS)(
    'Redis refusing connections exits 69, not 1 as contention does (--client %s)',
    async (name) => {
      const port = await freePort()
      const results = await Promise.all(
        [['run', 'job', '--wait', '0', '--', 'true'], ['acquire', 'job'], ['inspect']].map((args) =>
          cli(['--client', name, '--redis', `redis://127.0.0.1:${port}`, ...args]),
        ),
      )
      for (const result of results) {
        expect(result).toMatchObject({ code: 69, stdout: '' })
        expect(result.stderr).toContain(`cannot connect to Redis at redis://127.0.0.1:${port}`)
      }
    },
    60_000,
  )

  it.each(CLIENTS)(
    'Redis refusing the password exits 77, and refusing a command (an ACL without EVALSHA) too (--client %s)',
    async (name) => {
      const [wrong, refused, inspected] = await Promise.all([
        cli(['--client', name, '--redis', `redis://ops@127.0.0.1:${guarded.port}`, 'inspect', 'job'], { env: { REDIS_PASSWORD: 'not-it' } }),
        cli(['--client', name, '--redis', guarded.url, 'acquire', 'job', '--wait', '0']),
        cli(['--client', name, '--redis', guarded.url, 'inspect']),
      ])
      expect(wrong).toMatchObject({ code: 77, stderr: expect.stringMatching(/WRONGPASS|invalid username-password/) })
      expect(wrong.stderr).not.toContain('not-it')
      expect(refused).toMatchObject({ code: 77, stderr: expect.stringContaining('NOPERM') })
      // SCAN is allowed: a listing works.
      expect(inspected).toMatchObject({ code: 0, stdout: 'no held or waited-for locks\n' })
    },
    60_000,
  )
})
