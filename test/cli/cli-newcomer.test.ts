// What a new user of the command line hit (issue 42), run as real processes against a real
// redis-server: `inspect` counts a semaphore's permits (not its leases) and shows elections,
// `fencelock watch` points to --watch, `leader --watch` says so while Redis does not answer,
// `run --elect` without --value campaigns with a value, and `--help` fits a terminal.
import { describe, expect, it } from 'vitest'
import { createLocks, type Lease, type Locks } from '../../src/index.js'
import { cli } from '../../harness/cli-process.js'
import { describeRedis, useIoredis } from '../../harness/per-adapter.js'
import { closeQuietly, uniquePrefix, until } from '../../harness/util.js'

const COLUMNS = 80

describe('fencelock --help', () => {
  it(`fits ${COLUMNS} columns, and so does every command's help`, async () => {
    for (const args of [['--help'], ['run', '--help'], ['inspect', '--help'], ['leader', '--help']]) {
      const help = await cli(args)
      expect(help.code, help.stderr).toBe(0)
      const wide = help.stdout.split('\n').filter((line) => line.length > COLUMNS)
      expect(wide, `fencelock ${args.join(' ')}`).toEqual([])
    }
  })

  it('`fencelock watch` points to --watch', async () => {
    const result = await cli(['watch'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('Unknown command "watch"')
    expect(result.stderr).toContain('fencelock inspect --watch')
    expect(result.stderr).toContain('fencelock leader <name> --watch')
  })
})

describeRedis('fencelock inspect and leader, for a newcomer', (server) => {
  const control = useIoredis(server)
  const instance = (prefix: string): Locks => createLocks({ redis: control.client, prefix })

  it('inspect counts the permits a semaphore holds, and says how many each holder has', async () => {
    const prefix = uniquePrefix('cli-permits')
    const locks = instance(prefix)
    const leases: Lease[] = []
    try {
      const pool = locks.semaphore('pool', { limit: 8 })
      leases.push(await pool.acquire({ permits: 3, ttl: 30_000 }), await pool.acquire({ permits: 1, ttl: 30_000 }))
      expect((await pool.inspect()).held).toBe(4)
      const common = ['--redis', server.url, '--prefix', prefix]
      const table = await cli(['inspect', ...common])
      expect(table.code, table.stderr).toBe(0)
      expect(table.stdout).toContain('pool (4/8)')
      expect(table.stdout).toMatch(/3 permits/)
      const json = await cli(['inspect', 'pool', '--semaphore', '--json', ...common])
      // Each holder says how many permits it has where it has more than one.
      const row = JSON.parse(json.stdout) as { limit: number; holders: { token: string; permits?: number }[] }
      expect(row).toMatchObject({ limit: 8 })
      expect(row.holders.map((h) => h.permits ?? 1).sort()).toEqual([1, 3])
      expect(row.holders.map((h) => h.token).sort()).toEqual(leases.map((l) => l.token).sort())
    } finally {
      await Promise.all(leases.map((l) => l.release()))
      await closeQuietly([locks])
    }
  })

  it('inspect shows an election: in the listing, and by its name (not "free" while it has a leader)', async () => {
    const prefix = uniquePrefix('cli-inspect-elect')
    const locks = instance(prefix)
    try {
      const term = await locks.election('scheduler', { ttl: 30_000 }).campaign('host-a')
      const common = ['--redis', server.url, '--prefix', prefix]
      const [listing, byName, json] = await Promise.all([
        cli(['inspect', ...common]),
        cli(['inspect', 'scheduler', ...common]),
        cli(['inspect', 'scheduler', '--json', ...common]),
      ])
      expect(listing.code, listing.stderr).toBe(0)
      expect(listing.stdout).toMatch(/election\s+scheduler\s+leader "host-a" fence \d+/)
      expect(byName.code, byName.stderr).toBe(0)
      expect(byName.stdout).not.toContain('free')
      expect(byName.stdout).toContain('leader "host-a"')
      expect(JSON.parse(json.stdout)).toMatchObject({
        kind: 'election',
        resource: 'scheduler',
        fence: term.fence,
        // Who leads since when: this test's process (the instance's default label, hostname:pid).
        holders: [{ value: 'host-a', fence: term.fence, holder: expect.stringMatching(new RegExp(`:${process.pid}$`)), since: expect.any(Number) }],
      })
      expect(listing.stdout).toMatch(/leader "host-a" fence \d+ [\d.]+s left, holder "[^"]+", since \S+Z/)
      await term.resign()
    } finally {
      await closeQuietly([locks])
    }
  })

  it('run --elect without --value campaigns with a non-empty value (the host and pid)', async () => {
    const prefix = uniquePrefix('cli-elect-value')
    const result = await cli(['run', '--elect', 'jobs', '--redis', server.url, '--prefix', prefix, '--', process.execPath, '-e', ''])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
  })

  describe('leader --watch while Redis does not answer', () => {
    it('says so on each refresh while Redis is paused, and that it answers again after', { timeout: 60_000 }, async () => {
      const prefix = uniquePrefix('cli-leader-down')
      let paused = false
      let resumed = false
      let stopped = false
      const watching = cli(['leader', 'jobs', '--watch', '--redis', server.url, '--prefix', prefix], {
        killAfter: 45_000,
        onOutput: ({ stdout, stderr }, child) => {
          if (!paused && stdout.includes('no leader')) {
            paused = true
            server.redis.pause()
          }
          if (paused && !resumed && stderr.split('\n').filter((l) => /Redis did not answer/.test(l)).length >= 2) {
            resumed = true
            server.redis.resume()
          }
          if (resumed && !stopped && /Redis answers again/.test(stderr)) {
            stopped = true
            child.kill('SIGTERM')
          }
        },
      })
      try {
        const result = await watching
        expect(result.stderr).toMatch(/Redis did not answer/)
        expect(result.stderr).toMatch(/Redis answers again/)
        expect(result.code).toBe(0)
      } finally {
        server.redis.resume()
      }
      await until('Redis answers', async () => (await control.client.ping()) === 'PONG')
    })
  })
})
