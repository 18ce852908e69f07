// The shipped examples run as child processes against a harness-started redis-server (and the
// local PostgreSQL for lease-signal), and do what their comments say: the CommonJS one loads the
// BUILT package through require('fencelock'); await-using releases at the end of each block and
// reports an overrun; lease-signal stops its HTTP request and its SQL query when the lock's key is
// deleted under it; graceful-shutdown finishes (or, past its grace period, aborts) the current job
// on SIGTERM, releases every lease and exits 0.
import { spawn, type ChildProcess } from 'node:child_process'
import { copyFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { requirePgOrSkip, pgConfig } from '../../harness/postgres.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { keysOf, until } from '../../harness/util.js'
import { installBuiltPackage } from './installed-package.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
// How long the package's build may take (tsup, about 30 s of CPU; a build waits on the sources'
// hash, so each change to src/ builds anew): 90 s was seen on two cores shared with other test
// runs, so 10x its CPU time.
const BUILD_LIMIT_MS = 300_000
const examples = path.join(root, 'examples')

interface Example {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  /** Resolves with the exit code (null if killed by a signal). */
  exited: Promise<number | null>
  /** Waits until stdout matches `pattern` (or the process ended), then returns stdout. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>
}

const children = new Set<ChildProcess>()

function start(args: string[], env: Record<string, string>, cwd = root): Example {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  void exited.then(() => children.delete(child))
  const ended = () => child.exitCode !== null || child.signalCode !== null
  return {
    child,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    async waitFor(pattern, timeoutMs = 20_000) {
      await until(`stdout matches ${pattern}`, () => pattern.test(stdout) || ended(), { timeout: timeoutMs, every: 25 }).catch((err: Error) => {
        throw new Error(`${err.message}\nstdout:\n${stdout}\nstderr:\n${stderr}`)
      })
      expect(stdout, `the example ended early; stderr:\n${stderr}`).toMatch(pattern)
      return stdout
    },
  }
}

/** The exit code, or a failure with the output if the example does not end within `ms`. */
async function exitOf(example: Example, ms = 20_000): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      example.child.kill('SIGKILL')
      reject(new Error(`the example did not exit within ${ms} ms\nstdout:\n${example.stdout()}\nstderr:\n${example.stderr()}`))
    }, ms)
  })
  try {
    return await Promise.race([example.exited, late])
  } finally {
    clearTimeout(timer)
  }
}

// Checked once, at collection: under CI=true a missing PostgreSQL fails the file instead of skipping.
const redisReady = requireRedisOrSkip()
const pgReady = redisReady && (await requirePgOrSkip())

const tsx = (file: string, env: Record<string, string>) => start(['--import', 'tsx', path.join(examples, file)], env)

describe.skipIf(!redisReady)('examples', () => {
  let redis: RedisProcess
  beforeAll(async () => {
    redis = await startRedis()
  })
  afterEach(() => {
    for (const child of children) child.kill('SIGKILL')
  })
  afterAll(async () => {
    await redis?.stop()
  })

  /** Lock keys (`...:L`) present in Redis: none once an example has released everything. */
  const lockKeys = async () => (await redis.cli('--scan', '--pattern', '*:L')).split('\n').filter(Boolean)

  describe('cjs-node-redis.cjs', () => {
    let dir: string
    beforeAll(async () => {
      // The built package installed as `fencelock` (`redis` resolves from the repository).
      // Declarations are not needed to run it, so they are not built.
      dir = await installBuiltPackage('fencelock-examples-')
      copyFileSync(path.join(examples, 'cjs-node-redis.cjs'), path.join(dir, 'cjs-node-redis.cjs'))
    }, BUILD_LIMIT_MS)
    afterAll(() => {
      if (dir) rmSync(dir, { recursive: true, force: true })
    })

    it('requires the built package and runs acquire, tryAcquire, release and withLock with node-redis', async () => {
      expect(createRequire(path.join(dir, 'x.cjs')).resolve('fencelock')).toBe(path.join(dir, 'node_modules', 'fencelock', 'dist', 'index.cjs'))
      const example = start([path.join(dir, 'cjs-node-redis.cjs')], { REDIS_URL: redis.url }, dir)
      expect(await exitOf(example)).toBe(0)
      const out = example.stdout()
      expect(example.stderr()).toBe('')
      const first = Number(/acquired report:daily, fence (\d+)/.exec(out)?.[1])
      const second = Number(/withLock: fence (\d+), held true/.exec(out)?.[1])
      expect(first).toBeGreaterThan(0)
      expect(second).toBeGreaterThan(first)
      for (const line of [
        'tryAcquire while held: null',
        'acquire while held: LOCK_TIMEOUT',
        'released: true',
        'withLock returned 42',
        `afterwards: held false, last fence ${second}`,
      ]) {
        expect(out).toContain(line)
      }
      expect(await lockKeys()).toEqual([])
    })
  })

  it('await-using.ts: each block releases its lease, a throwing one too, and an overrun block throws LockLostError', async () => {
    const example = tsx('await-using.ts', { REDIS_URL: redis.url })
    expect(await exitOf(example)).toBe(0)
    expect(example.stderr()).toBe('')
    const out = example.stdout()
    for (const line of [
      'A-1: held after the block: false',
      'A-2: payment provider down; held after the block: false',
      'A-3: still held at the end of the block: false',
      'A-3: LOCK_LOST (expired)',
    ]) {
      expect(out).toContain(line)
    }
    expect(await lockKeys()).toEqual([])
  })

  it.skipIf(!pgReady)('lease-signal.ts: deleting the lock key aborts the fetch and cancels the SQL query', async () => {
    // An odd duration makes the query's text unique on the shared database.
    const workMs = 20_000 + (process.pid % 1000)
    const sleeping = `SELECT pg_sleep(${workMs / 1000})`
    const example = tsx('lease-signal.ts', { REDIS_URL: redis.url, DATABASE_URL: pgConfig().connectionString, WORK_MS: String(workMs) })
    await example.waitFor(/holding report:monthly/)
    const db = new pg.Client(pgConfig())
    await db.connect()
    try {
      const running = async () =>
        Number((await db.query('SELECT count(*) AS n FROM pg_stat_activity WHERE query = $1 AND state = $2', [sleeping, 'active'])).rows[0].n)
      await until('the query runs', async () => (await running()) === 1, { timeout: 10_000, every: 50 })
      expect(await redis.cli('DEL', keysOf('fencelock:', 'report:monthly').lock)).toBe('1')
      expect(await exitOf(example)).toBe(0)
      // Lost at the next extension (every ttl/3 = 1 s), not at the work's own end: the loss's
      // reason is the extension Redis refused, and no work says done (checked below).
      expect(example.stderr()).toBe('')
      const out = example.stdout()
      expect(out).toMatch(/server: the client hung up after \d+ ms/)
      expect(out).toContain('fetch: stopped: Lost lock "report:monthly"')
      expect(out).toContain('pg: stopped: query cancelled: Lost lock "report:monthly"')
      expect(out).toContain('withLock: LOCK_LOST (refused)')
      expect(out).not.toContain('done')
      expect(await running()).toBe(0) // cancelled on the server, not only abandoned by the client
    } finally {
      await db.end()
    }
  })

  describe('graceful-shutdown.ts', () => {
    it('on SIGTERM finishes the current job, takes no new one, releases every lease and exits 0', async () => {
      const example = tsx('graceful-shutdown.ts', { REDIS_URL: redis.url, JOB_MS: '1000', GRACE_MS: '10000' })
      await example.waitFor(/job 1: started/)
      expect(await lockKeys()).toEqual(expect.arrayContaining([keysOf('fencelock:', 'worker:leader').lock]))
      example.child.kill('SIGTERM')
      expect(await exitOf(example)).toBe(0)
      expect(example.stderr()).toBe('')
      const out = example.stdout()
      const [, id] = /(\d+): started[^\n]*\nSIGTERM/.exec(out) ?? []
      expect(id, out).toBeDefined()
      // The job running at SIGTERM finished; none started after it.
      expect(out).toMatch(new RegExp(`SIGTERM: taking no new job[^\\n]*\\njob ${id}: done\\nreleased the leader lease: true\\nbye\\n$`))
      expect(await lockKeys()).toEqual([])
    })

    it('aborts the current job through its signal when the grace period ends, and still exits 0', async () => {
      const example = tsx('graceful-shutdown.ts', { REDIS_URL: redis.url, JOB_MS: '30000', GRACE_MS: '300' })
      await example.waitFor(/job 1: started/)
      example.child.kill('SIGTERM')
      // Exits at the end of the grace period, not of the 30 s job: the job says it was stopped
      // for that reason, and never that it was done (checked below).
      expect(await exitOf(example)).toBe(0)
      expect(example.stderr()).toBe('')
      const out = example.stdout()
      expect(out).toContain('job 1: stopped: the 300 ms grace period is over')
      expect(out).not.toContain('job 1: done')
      expect(out).not.toContain('job 2')
      expect(out).toMatch(/released the leader lease: true\nbye\n$/)
      expect(await lockKeys()).toEqual([])
    })
  })
})
