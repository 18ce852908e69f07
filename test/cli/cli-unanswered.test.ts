// The `fencelock` command against a Redis that accepts connections but never answers (SIGSTOP: the
// kernel still completes the TCP handshake): every command, with each client, gives up within a
// few seconds, says that Redis did not answer, and exits 69 (EX_UNAVAILABLE). A Redis that stops
// answering during `inspect --watch` is reported at each refresh, and SIGINT still ends the watch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cli, inBatches } from '../../harness/cli-process.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'

// The CLI's 5 s deadline, with room, on top of what starting a CLI process costs at the moment (on
// a loaded 2-core machine, up to several seconds): a hang lasted 25 s with node-redis, 60 s with ioredis.
const FEW_SECONDS = 12_000
const KILL_AFTER = 60_000

describe.skipIf(!requireRedisOrSkip())('fencelock CLI when Redis accepts connections but never answers', () => {
  let paused: RedisProcess
  let live: RedisProcess
  beforeAll(async () => {
    ;[paused, live] = await Promise.all([startRedis(), startRedis()])
  })
  afterAll(async () => {
    await Promise.all([paused?.stop(), live?.stop()]) // stop() sends SIGCONT first
  })

  const commands: string[][] = [
    ['run', 'x', '--ttl', '5s', '--wait', '0', '--', 'echo', 'hi'],
    ['run', 'x', '--semaphore', '2', '--', 'echo', 'hi'],
    ['acquire', 'x', '--wait', '0'],
    ['acquire', 'x'],
    ['extend', 'x', 'tok'],
    ['release', 'x', 'tok'],
    ['release', 'x', 'tok', '--semaphore'],
    ['release', 'x', '--force', '--yes'],
    ['inspect'],
    ['inspect', 'x'],
    ['inspect', 'x', '--read-write', '--json'],
    ['inspect', '--watch'],
  ]

  it.each(['ioredis', 'node-redis'])(
    'every command exits 69 within a few seconds, saying Redis did not answer (--client %s)',
    async (client) => {
      paused.pause()
      try {
        const url = paused.url
        const runs = [...commands.map((args) => ['--redis', url, ...args]), ['--redis', live.url, '--redis', url, 'inspect', 'x']]
        // A `--version` run in every batch of six measures what starting a CLI process costs meanwhile.
        const jobs = runs.flatMap((args, i) => (i % 6 === 0 ? [['--version'], args] : [args]))
        const all = await inBatches(jobs, 6, async (args) => ({ args, result: await cli(['--client', client, ...args], { killAfter: KILL_AFTER }) }))
        const startup = Math.max(...all.filter((r) => r.args[0] === '--version').map((r) => r.result.elapsed))
        for (const { args, result } of all.filter((r) => r.args[0] !== '--version')) {
          const seen = { args, code: result.code, stderr: result.stderr, elapsed: Math.round(result.elapsed), startup: Math.round(startup) }
          expect(seen).toEqual({
            ...seen,
            code: 69,
            stderr: expect.stringContaining(`Redis at ${url} did not answer within 5000 ms: the connection was accepted but no reply came`),
          })
          expect(result.elapsed, JSON.stringify(seen)).toBeLessThan(startup + FEW_SECONDS)
          expect(result.stdout).toBe('')
        }
      } finally {
        paused.resume()
      }
    },
    240_000,
  )

  it.each(['ioredis', 'node-redis'])(
    'inspect --watch reports each refresh that Redis did not answer, and ends with 0 on SIGINT (--client %s)',
    async (client) => {
      let pausedAt: number | undefined
      let reportedAfter: number | undefined
      try {
        const result = await cli(['--client', client, '--redis', paused.url, 'inspect', '--watch', '--interval', '200ms'], {
          killAfter: KILL_AFTER,
          onOutput: ({ stdout, stderr }, child) => {
            if (pausedAt === undefined && stdout.includes('no held or waited-for locks')) {
              paused.pause()
              pausedAt = performance.now()
            }
            if (pausedAt !== undefined && reportedAfter === undefined && stderr.includes('did not answer')) {
              reportedAfter = performance.now() - pausedAt
              child.kill('SIGINT')
            }
          },
        })
        expect(pausedAt).toBeDefined()
        expect(result.stderr).toMatch(/Redis did not answer the SCAN of redis:\/\/127\.0\.0\.1:\d+ within 5000 ms/)
        expect(reportedAfter).toBeLessThan(FEW_SECONDS)
        expect(result.code).toBe(0)
      } finally {
        paused.resume()
      }
    },
    120_000,
  )
})
