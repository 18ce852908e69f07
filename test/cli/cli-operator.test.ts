// The operator's `fencelock` command, run as a real process (its bundle, or through tsx) against real
// redis-servers: colour only on a terminal (a real pseudo-terminal from `script`), inspect's
// listing found with SCAN (ioredis and node-redis), --watch, release --force (also a holder that
// changes while the prompt waits), run --semaphore / --read / --write, a quorum of three nodes.
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type Lease, type Locks } from '../../src/index.js'
import { findResources, globTest, parseKey } from '../../src/cli/scan.js'
import { packageVersion } from '../../src/cli/version.js'
import { mutexKeys } from '../../src/primitives/mutex/mutex.js'
import { rwKeys } from '../../src/primitives/rw-lock/rw-lock.js'
import { semaphoreKeys } from '../../src/primitives/semaphore/semaphore.js'
import { cliEnv, cliOutcome as cli, cliPath, root, type CliOutcome } from '../../harness/cli-process.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { describeRedis, useIoredis } from '../../harness/per-adapter.js'
import { scriptCalls } from '../../harness/commandstats.js'
import { recordAcquires } from '../../harness/telemetry.js'
import { closeQuietly, tokenIn, uniquePrefix, until } from '../../harness/util.js'
import { nodeArgsFor } from '../../harness/prebuilt.js'

const ESC = '\u001b['

/** What the listing shows of who holds a lock since when (server times, ms). */
const recorded = (holder: unknown) => ({ holder, since: expect.any(Number), lastExtended: expect.any(Number) })

const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`

/**
 * Runs the CLI on a pseudo-terminal (util-linux `script`): stdin, stdout and stderr are a
 * terminal. `onOutput` sees the terminal's output so far and may type into it.
 */
function onTerminal(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; onOutput?: (text: string, type: (line: string) => void, raw: (bytes: string) => void) => void } = {},
): Promise<{ code: number | null; output: string }> {
  // `exec`: the CLI itself is the terminal's foreground process, as when a user runs it. `script`
  // runs the command with $SHELL or /bin/sh (when SHELL is unset, as in CI), and dash does not
  // exec the last command by itself: a Ctrl-C then killed the shell, and script reported 130.
  const command = `exec ${[process.execPath, ...nodeArgsFor(cliPath), ...args].map(quote).join(' ')}`
  const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: root, env: cliEnv({ TERM: 'xterm', ...options.env }) })
  let output = ''
  const type = (line: string) => void child.stdin.write(`${line}\n`)
  const raw = (bytes: string) => void child.stdin.write(bytes)
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString()
    options.onOutput?.(output, type, raw)
  })
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, output })))
}

function haveScript(): boolean {
  try {
    execFileSync('script', ['-qfec', 'true', '/dev/null'], { stdio: 'ignore' })
    return true
  } catch {
    if (process.env.CI === 'true') throw new Error('[fencelock cli test] util-linux `script` (a pseudo-terminal) is missing: in CI this is fatal')
    console.warn('[fencelock cli test] skipping the terminal tests: util-linux `script` is missing')
    return false
  }
}

// Started with the file (see the quorum test) and stopped after it.
let quorumNodes: Promise<RedisProcess[]> = Promise.resolve([])
beforeAll(() => {
  if (requireRedisOrSkip()) quorumNodes = Promise.all([startRedis(), startRedis(), startRedis()])
  quorumNodes.catch(() => {})
})
afterAll(async () => {
  await Promise.all((await quorumNodes.catch(() => [])).map((n) => n.stop()))
})

describe('fencelock CLI: parts without Redis', () => {
  it('the key parser reads every key the library builds, and nothing else', () => {
    const prefix = 'app:'
    for (const name of ['job', 'a:b', 'x}y', 'sp ace', '{nested}']) {
      for (const key of Object.values(mutexKeys(prefix, name)).filter((k) => !k.endsWith(':W'))) expect(parseKey(prefix, key)).toEqual({ kind: 'mutex', name })
      const s = semaphoreKeys(prefix, name, 3)
      for (const key of [s.fence, s.queue, s.queueExpiry, s.limit, ...s.slots]) expect(parseKey(prefix, key)).toEqual({ kind: 'semaphore', name })
      for (const key of Object.values(rwKeys(prefix, name)).filter((k) => !k.endsWith(':W')))
        expect(parseKey(prefix, key)).toEqual({ kind: 'read-write', name })
    }
    expect(parseKey(prefix, 'other:{job}:L')).toBeUndefined()
    expect(parseKey(prefix, 'app:{job}:Z')).toBeUndefined()
    expect(parseKey(prefix, 'app:job:L')).toBeUndefined()
  })

  it('globs match resource names as Redis does', () => {
    expect(['acct:1', 'acct:22', 'acct', 'xacct:1'].filter(globTest('acct:*'))).toEqual(['acct:1', 'acct:22'])
    expect(['a1', 'a2', 'a3', 'ab'].filter(globTest('a[12]'))).toEqual(['a1', 'a2'])
    expect(['a1', 'ab'].filter(globTest('a?'))).toEqual(['a1', 'ab'])
    expect(['a*', 'ab'].filter(globTest('a\\*'))).toEqual(['a*'])
  })

  it('reads the version from the package.json next to the build (dist/cli.js) or to the source (src/cli/)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-version-'))
    try {
      mkdirSync(path.join(dir, 'dist'))
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'fencelock', version: '9.8.7' }))
      expect(packageVersion(pathToFileURL(path.join(dir, 'dist', 'cli.js')).href)).toBe('9.8.7')
      expect(packageVersion(pathToFileURL(path.join(dir, 'src', 'cli', 'version.ts')).href)).toBe('9.8.7')
      expect(packageVersion(pathToFileURL(path.join(os.tmpdir(), 'nowhere', 'x', 'cli.js')).href)).toBe('unknown')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('says what to install when the chosen client, or both, cannot be loaded: a set-up problem, exit 2', async () => {
    // A module hook makes both packages unresolvable in the CLI's process, as if not installed.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-noclient-'))
    try {
      writeFileSync(
        path.join(dir, 'hooks.mjs'),
        `export async function resolve(specifier, context, next) {
          if (specifier === 'ioredis' || specifier === 'redis') throw Object.assign(new Error('Cannot find package ' + specifier), { code: 'ERR_MODULE_NOT_FOUND' })
          return next(specifier, context)
        }`,
      )
      writeFileSync(path.join(dir, 'register.mjs'), `import { register } from 'node:module'\nregister('./hooks.mjs', import.meta.url)\n`)
      const run = async (...args: string[]) => {
        const { code, stderr } = await cli(args, { nodeArgs: ['--import', pathToFileURL(path.join(dir, 'register.mjs')).href] })
        return { code, stderr }
      }
      const [neither, chosen, io] = await Promise.all([
        run('inspect', '--redis', 'redis://127.0.0.1:1'),
        run('--client', 'node-redis', 'inspect', '--redis', 'redis://127.0.0.1:1'),
        run('--client', 'ioredis', 'run', 'job', '--redis', 'redis://127.0.0.1:1', '--', 'true'),
      ])
      expect(neither).toEqual({ code: 2, stderr: expect.stringContaining('neither is installed: run `npm install ioredis` (or `npm install redis`)') })
      expect(chosen).toEqual({ code: 2, stderr: expect.stringContaining('--client node-redis: the redis package is not installed: run `npm install redis`') })
      expect(io).toEqual({ code: 2, stderr: expect.stringContaining('--client ioredis: the ioredis package is not installed: run `npm install ioredis`') })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it.runIf(haveScript())(
    'help is in colour on a terminal only, and never with NO_COLOR; release --force off a terminal needs --yes',
    async () => {
      const [piped, tty, noColor, sub, force] = await Promise.all([
        cli(['--help']),
        onTerminal(['--help']),
        onTerminal(['--help'], { env: { NO_COLOR: '1' } }),
        cli(['run', '--help']),
        cli(['release', 'job', '--force', '--redis', 'redis://127.0.0.1:1']),
      ])
      expect(piped.code).toBe(0)
      expect(piped.stdout).toContain('Usage: fencelock')
      expect(piped.stdout).not.toContain(ESC)
      expect(tty.code).toBe(0)
      expect(tty.output).toContain(`${ESC}1mUsage:`)
      expect(noColor.code).toBe(0)
      expect(noColor.output).toContain('Usage: fencelock')
      expect(noColor.output).not.toContain(ESC)
      expect(sub.stdout).toContain('Usage: fencelock run <resource> [options] -- <cmd> [args...]')
      expect(sub.stdout).toContain('--semaphore <n>')
      expect(force).toEqual({ code: 2, stdout: '', stderr: expect.stringContaining('add --yes') })
    },
    60_000,
  )
})

describe.skipIf(!requireRedisOrSkip())('fencelock CLI for operators', () => {
  /** The label of the test's leases: inspect names it, quoted (it holds a space). */
  const HOLDER = 'billing-worker 7'
  let redis: RedisProcess
  let client: Redis
  let locks: Locks
  let prefix: string
  beforeAll(async () => {
    redis = await startRedis()
    client = new Redis(redis.url, { lazyConnect: true })
    await client.connect()
    prefix = uniquePrefix('cli-op')
    locks = createLocks({ redis: client, prefix, holder: HOLDER })
  })
  afterAll(async () => {
    await closeQuietly([locks])
    client?.disconnect()
    await redis?.stop()
  })
  const on = (...args: string[]) => cli(['--redis', redis.url, '--prefix', prefix, ...args])
  const json = (result: CliOutcome) => {
    expect(result.stderr).toBe('')
    return JSON.parse(result.stdout)
  }

  it('inspect lists held and waited-for mutexes, semaphores and read/write locks, with ioredis and node-redis; a glob lists matching names', async () => {
    const held = await locks.acquire('acct:1', { ttl: 30_000 })
    const pool = locks.semaphore('pool', { limit: 3 })
    const permits = [await pool.acquire({ ttl: 30_000 }), await pool.acquire({ ttl: 30_000 })]
    const reader = await locks.readWrite('cfg').read({ ttl: 30_000 })
    await (await locks.acquire('acct:2')).release() // free: only its fence key is left
    const waiterLocks = createLocks({ redis: client, prefix })
    const waiting = waiterLocks.acquire('acct:1', { wait: 60_000 }).catch((err: Error) => err)
    try {
      await until('the waiter is queued', async () => (await locks.inspect('acct:1')).waiters === 1, { timeout: 10_000 })
      const [io, nr, glob, all, table] = await Promise.all([
        on('inspect', '--json'),
        on('--client', 'node-redis', 'inspect', '--json'),
        on('inspect', 'acct:*', '--json'),
        on('inspect', '--all', '--json'),
        on('inspect'),
      ])
      const expected = [
        {
          kind: 'mutex',
          resource: 'acct:1',
          holders: [{ token: held.token, fence: held.fence, ttl: expect.any(Number), ...recorded(HOLDER) }],
          fence: held.fence,
          waiters: 1,
        },
        {
          kind: 'read-write',
          resource: 'cfg',
          holders: [{ token: reader.token, fence: null, ttl: expect.any(Number), mode: 'read', ...recorded(HOLDER) }],
          fence: reader.fence,
          waiters: 0,
        },
        {
          kind: 'semaphore',
          resource: 'pool',
          holders: expect.arrayContaining(permits.map((p) => ({ token: p.token, fence: null, ttl: expect.any(Number), ...recorded(HOLDER) }))),
          fence: Math.max(...permits.map((p) => p.fence)),
          waiters: 0,
          limit: 3,
        },
      ]
      expect(json(io)).toEqual(expected)
      expect(json(nr)).toEqual(expected)
      expect(json(io)[0].holders[0].ttl).toBeGreaterThan(10_000)
      const acct2 = { kind: 'mutex', resource: 'acct:2', holders: [], fence: expect.any(Number), waiters: 0 }
      expect(json(glob)).toEqual([expected[0], acct2])
      expect(json(all).map((r: { resource: string }) => r.resource)).toEqual(['acct:1', 'acct:2', 'cfg', 'pool'])
      expect(table.code).toBe(0)
      const lines = table.stdout.trimEnd().split('\n')
      expect(lines[0]).toMatch(/^KIND +RESOURCE +HOLDERS \(token, fence, ttl left, holder, since, last extended\) +LAST FENCE +WAITERS$/)
      const since = new Date(json(io)[0].holders[0].since).toISOString()
      expect(lines[1]).toMatch(
        new RegExp(`^mutex +acct:1 +${held.token} fence ${held.fence} \\d+\\.\\ds left, holder "${HOLDER}", since ${since} +${held.fence} +1$`),
      )
      expect(table.stdout).toMatch(/semaphore +pool \(2\/3\) /)
      expect(table.stdout).not.toContain(ESC)
    } finally {
      await held.release()
      await Promise.all([...permits.map((p) => p.release()), reader.release()])
      const next = await waiting
      if (!(next instanceof Error)) await next.release()
      await closeQuietly([waiterLocks])
    }
  }, 60_000)

  it('inspect <name> --semaphore / --read-write shows that one semaphore or read/write lock, as a listing row (JSON: the row object); with a glob they are refused', async () => {
    const pool = locks.semaphore('jobs', { limit: 4 })
    const permits = [await pool.acquire({ ttl: 30_000 }), await pool.acquire({ ttl: 30_000 })]
    const writer = await locks.readWrite('settings').write({ ttl: 30_000 })
    try {
      const [sem, rw, semTable, free, globbed, both] = await Promise.all([
        on('inspect', 'jobs', '--semaphore', '--json'),
        on('inspect', 'settings', '--read-write', '--json'),
        on('inspect', 'jobs', '--semaphore'),
        on('inspect', 'nothing-here', '--semaphore', '--json'),
        on('inspect', 'job*', '--semaphore'),
        on('inspect', 'jobs', '--semaphore', '--read-write'),
      ])
      expect(json(sem)).toEqual({
        kind: 'semaphore',
        resource: 'jobs',
        holders: expect.arrayContaining(permits.map((p) => ({ token: p.token, fence: null, ttl: expect.any(Number), ...recorded(HOLDER) }))),
        fence: Math.max(...permits.map((p) => p.fence)),
        waiters: 0,
        limit: 4,
      })
      expect(json(rw)).toEqual({
        kind: 'read-write',
        resource: 'settings',
        holders: [{ token: writer.token, fence: writer.fence, ttl: expect.any(Number), mode: 'write', ...recorded(HOLDER) }],
        fence: writer.fence,
        waiters: 0,
      })
      expect(semTable.code).toBe(0)
      expect(semTable.stdout).toMatch(/^KIND +RESOURCE /)
      expect(semTable.stdout).toMatch(/semaphore +jobs \(2\/4\) /)
      expect(json(free)).toEqual({ kind: 'semaphore', resource: 'nothing-here', holders: [], fence: null, waiters: 0 })
      expect(globbed.code).toBe(2)
      expect(globbed.stderr).toMatch(/--semaphore.*one exact name/)
      expect(both.code).toBe(2)
    } finally {
      await Promise.all([...permits.map((p) => p.release()), writer.release()])
    }
  }, 60_000)

  it('inspect --watch prints a snapshot every --interval, each followed by a blank line off a terminal, and ends with 0 on SIGINT', async () => {
    const lease = await locks.acquire('watched', { ttl: 30_000 })
    let sent = false
    const result = await cli(['--redis', redis.url, '--prefix', prefix, 'inspect', 'watch*', '--watch', '--interval', '200ms', '--json'], {
      onOutput: ({ stdout: text }, child) => {
        if (!sent && text.split('\n\n').length >= 4) {
          sent = true
          child.kill('SIGINT')
        }
      },
    })
    await lease.release()
    expect(result.code).toBe(0)
    expect(result.stderr).toBe('')
    const snapshots = result.stdout.split('\n\n').filter((s) => s.trim() !== '')
    expect(snapshots.length).toBeGreaterThanOrEqual(3)
    for (const s of snapshots)
      expect(JSON.parse(s)).toEqual([expect.objectContaining({ resource: 'watched', holders: [expect.objectContaining({ token: lease.token })] })])
  }, 60_000)

  it.runIf(haveScript())(
    'inspect --watch on a terminal redraws in place with cursor codes and ends with 0 on Ctrl-C',
    async () => {
      const lease = await locks.acquire('tty-watched', { ttl: 30_000 })
      let interrupted = false
      const result = await onTerminal(['--redis', redis.url, '--prefix', prefix, 'inspect', 'tty-*', '--watch', '--interval', '200ms'], {
        onOutput: (text, _type, raw) => {
          if (!interrupted && text.split(`${ESC}H${ESC}2J`).length >= 4) {
            interrupted = true
            raw('\u0003') // Ctrl-C: the terminal sends SIGINT to the foreground process
          }
        },
      })
      await lease.release()
      expect(interrupted).toBe(true)
      expect(result.code).toBe(0)
      expect(result.output).toContain(`${ESC}?25l`)
      expect(result.output).toContain(lease.token)
      expect(result.output.trimEnd().endsWith(`${ESC}?25h`)).toBe(true)
    },
    60_000,
  )

  it('release --force removes a holder whose token it did not have, wakes the waiter, and says whom it removed; nothing held exits 1', async () => {
    const stuck = await locks.acquire('stuck', { ttl: 60_000 })
    const waiterLocks = createLocks({ redis: client, prefix })
    const acquires = recordAcquires()
    await redis.cli('CONFIG', 'RESETSTAT')
    const waiting = waiterLocks.acquire('stuck', { wait: 50_000 })
    try {
      // A fresh waiter sends its first attempt, subscribes, and looks once more when the
      // subscription is active (a release in between would have gone unheard): both attempts (the
      // only scripts run meanwhile) must be done before the release, or the second one could take
      // the lock instead of the release's message.
      await until('the waiter made its two attempts', async () => (await scriptCalls(redis)) >= 2, { timeout: 10_000 })
      expect((await locks.inspect('stuck')).waiters).toBe(1)
      await until('the holder listens for revocations', async () => Number((await redis.cli('PUBSUB', 'NUMSUB', `${prefix}revoked`)).split('\n').at(-1)) >= 1)
      const [forced, none] = await Promise.all([on('release', 'stuck', '--force', '--yes'), on('release', 'never-held', '--force', '--yes')])
      expect(forced.code).toBe(0)
      expect(forced.stdout).toMatch(
        new RegExp(
          `^removed the holder of "stuck": token ${stuck.token}, fence ${stuck.fence}, .* \\(\\d+ ms\\) left; its process is told \\(its lease is lost, reason revoked\\)\\n$`,
        ),
      )
      const next = await waiting
      // Woken by the release's message, not by the 60 s ttl running out (the re-check).
      const wakes = acquires.wakes('stuck')
      expect(wakes).toContain('release')
      expect(wakes).not.toContain('recheck')
      expect(next.fence).toBeGreaterThan(stuck.fence)
      await next.release()
      expect(none.code).toBe(1)
      expect(none.stderr).toContain('lock "never-held" is not held')
      // The old holder was told at once: its signal aborted with reason revoked, before any extend.
      await until('the old holder heard it', () => stuck.signal.aborted)
      expect(stuck.signal.reason).toMatchObject({ name: 'LockLostError', reason: 'revoked' })
      expect(await stuck.extend(10_000).catch((err: Error) => err.name)).toBe('LockLostError')
    } finally {
      acquires.stop()
      await closeQuietly([waiterLocks])
    }
  }, 60_000)

  it('release --semaphore and --read-write: a permit or a reader by token, and --force removes every holder and wakes a waiter', async () => {
    const pool = locks.semaphore('fpool', { limit: 2 })
    const [p1, p2] = [await pool.acquire({ ttl: 60_000 }), await pool.acquire({ ttl: 60_000 })]
    const table = locks.readWrite('ftable')
    const [r1, r2] = [await table.read({ ttl: 60_000 }), await table.read({ ttl: 60_000 })]
    const other = createLocks({ redis: client, prefix })
    const writing = other.readWrite('ftable').write({ wait: 50_000 })
    try {
      await until('the writer is queued', async () => (await table.inspect()).waiters === 1, { timeout: 10_000 })
      const [byToken, reader, wrong] = await Promise.all([
        on('release', 'fpool', p1.token, '--semaphore'),
        on('release', 'ftable', r1.token, '--read-write'),
        on('release', 'ftable', 'not-a-holder', '--read-write'),
      ])
      expect(byToken.code).toBe(0)
      expect(reader.code).toBe(0)
      expect(wrong).toMatchObject({ code: 1, stderr: expect.stringContaining('read/write lock "ftable" is not held by that token') })
      expect((await pool.inspect()).permits.map((p) => p.token)).toEqual([p2.token])
      expect((await table.inspect()).readers.map((r) => r.token)).toEqual([r2.token])
      const [sem, rw, none] = await Promise.all([
        on('release', 'fpool', '--semaphore', '--force', '--yes'),
        on('release', 'ftable', '--read-write', '--force', '--yes'),
        on('release', 'fnothing', '--read-write', '--force', '--yes'),
      ])
      expect(sem.code, sem.stderr).toBe(0)
      expect(sem.stdout).toContain(`removed a holder of semaphore "fpool": token ${p2.token}`)
      expect(rw.code).toBe(0)
      expect(rw.stdout).toContain(`removed a holder of read/write lock "ftable": token ${r2.token} (read)`)
      expect(none).toMatchObject({ code: 1, stderr: expect.stringContaining('read/write lock "fnothing" is not held') })
      expect((await pool.inspect()).held).toBe(0)
      const writer = await writing // woken by the last reader's removal
      expect(writer.fence).toBeGreaterThan(r2.fence)
      await writer.release()
      expect(await r2.extend(10_000).catch((err: Error) => err.name)).toBe('LockLostError')
    } finally {
      await closeQuietly([other])
    }
  }, 60_000)

  it.runIf(haveScript())(
    'release --force asks on a terminal; a holder that changed while it asked is not removed (exit 1)',
    async () => {
      let old: Lease | undefined = await locks.acquire('asked', { ttl: 60_000 })
      let replacement: Lease | undefined
      let answered = false
      const result = await onTerminal(['--redis', redis.url, '--prefix', prefix, 'release', 'asked', '--force'], {
        onOutput: (text, type) => {
          if (answered || !text.includes('[y/N]')) return
          answered = true
          // Between the question and the answer, the holder changes.
          void (async () => {
            await old!.release()
            old = undefined
            replacement = await locks.acquire('asked', { ttl: 60_000 })
            type('y')
          })()
        },
      })
      expect(answered).toBe(true)
      // The question names the holder's label (the suite's instance is labelled "billing-worker 7").
      expect(result.output).toMatch(/Remove the lock held by holder "billing-worker 7", token [\w-]+ \(fence \d+, \d+ ms left\)\? \[y\/N\]/)
      expect(result.code).toBe(1)
      expect(result.output).toContain('not removed: lock "asked" is no longer held by token')
      expect(await locks.inspect('asked')).toMatchObject({ held: true, token: replacement!.token })
      await replacement!.release()
    },
    60_000,
  )

  it('run --semaphore N holds one of N permits; --read shares with readers, --write waits for them', async () => {
    const printToken = [process.execPath, '-e', 'console.log(process.env.FENCELOCK_TOKEN)']
    const pool = locks.semaphore('render', { limit: 2 })
    const one = await pool.acquire({ ttl: 30_000 })
    const reader = await locks.readWrite('conf').read({ ttl: 30_000 })
    const [permit, read, write] = await Promise.all([
      on('run', '--semaphore', '2', 'render', '--wait', '0', '--', ...printToken),
      on('run', '--read', 'conf', '--wait', '0', '--', ...printToken),
      on('run', '--write', 'conf', '--wait', '0', '--', ...printToken),
    ])
    expect(permit).toMatchObject({ code: 0, stdout: expect.stringMatching(/^[\w-]+@1\n$/) })
    expect(read).toMatchObject({ code: 0, stdout: expect.stringMatching(/^[\w-]+\n$/) })
    expect(write.code).toBe(1)
    expect(write.stderr).toContain(`read/write lock "conf" is held by `)
    expect(write.stderr).toContain(`token ${reader.token} (read, `)
    const two = await pool.acquire({ ttl: 30_000 })
    const full = await on('run', '--semaphore', '2', 'render', '--wait', '0', '--', ...printToken)
    expect(full.code).toBe(1)
    await Promise.all([one.release(), two.release(), reader.release()])
    expect((await pool.inspect()).held).toBe(0)
  }, 60_000)
})

describe.skipIf(!requireRedisOrSkip())('fencelock CLI on a quorum of three independent nodes', () => {
  // A new node counts once it has been up for maxTtl (whole seconds of uptime): the nodes start
  // with the file, so they are old enough when this test comes.
  const MAX_TTL = '25s'
  const uptime = async (n: RedisProcess) => Number(/uptime_in_seconds:(\d+)/.exec(await n.cli('INFO', 'server'))?.[1] ?? 0)

  it('acquire, inspect (a SCAN of every node) and release with --redis given three times, with both clients', async () => {
    const nodes = await quorumNodes
    await until('every node counts', async () => (await Promise.all(nodes.map(uptime))).every((s) => s >= 26), { timeout: 40_000, every: 250 })
    const prefix = uniquePrefix('cli-quorum')
    const connection = (client: string) => ['--client', client, '--prefix', prefix, '--max-ttl', MAX_TTL, ...nodes.flatMap((n) => ['--redis', n.url])]
    const acquired = await cli([...connection('ioredis'), 'acquire', 'q', '--ttl', MAX_TTL, '--json'])
    expect(acquired.stderr).toBe('')
    expect(acquired.code).toBe(0)
    const lease = JSON.parse(acquired.stdout) as { token: string; fence: number }
    // The lock is on a majority of the nodes at least: the quorum wrote it.
    // Each holds "<token> <since> <last extended> <holder>": the token first.
    const holders = await Promise.all(nodes.map((n) => n.cli('GET', mutexKeys(prefix, 'q').lock)))
    expect(holders.filter((h) => tokenIn(h) === lease.token).length).toBeGreaterThanOrEqual(2)
    const [listed, one] = await Promise.all([
      cli([...connection('node-redis'), 'inspect', '--json']),
      cli([...connection('ioredis'), 'inspect', 'q', '--json']),
    ])
    // The library's quorum inspect reports the largest fence key of all nodes, which a node outside
    // the granting majority may have set a little higher than the lease's fence.
    const fence = expect.toSatisfy((f: number) => f >= lease.fence)
    expect(JSON.parse(listed.stdout)).toEqual([
      // The CLI process that acquired it is the holder: its host name and pid.
      {
        kind: 'mutex',
        resource: 'q',
        holders: [{ token: lease.token, fence, ttl: expect.any(Number), ...recorded(expect.stringMatching(/:\d+$/)) }],
        fence,
        waiters: 0,
      },
    ])
    expect(JSON.parse(one.stdout)).toMatchObject({ held: true, token: lease.token, fence })
    expect((await cli([...connection('node-redis'), 'release', 'q', lease.token])).code).toBe(0)
    expect(await Promise.all(nodes.map((n) => n.cli('EXISTS', mutexKeys(prefix, 'q').lock)))).toEqual(['0', '0', '0'])
  }, 90_000)
})

// findResources is what inspect uses; here on a node that holds many keys, in small SCAN steps.
describeRedis('finding resources with SCAN', (server) => {
  const plain = useIoredis(server)

  it('walks the whole keyspace in steps, keeps only fencelock keys under the prefix, one entry per kind and name', async () => {
    const prefix = 'scan-test:'
    const pipeline = plain.client.pipeline()
    for (let i = 0; i < 500; i++) pipeline.set(`unrelated:${i}`, 'x')
    for (let i = 0; i < 50; i++) pipeline.set(mutexKeys(prefix, `m${i}`).lock, 't').set(mutexKeys(prefix, `m${i}`).fence, '1')
    pipeline
      .set(semaphoreKeys(prefix, 's', 2).slots[1]!, 't')
      .set(rwKeys(prefix, 'rw').readers, 't')
      .set(mutexKeys('other:', 'm0').lock, 't')
    await pipeline.exec()
    const node = {
      scan: async (cursor: string, match: string, count: number) => (await plain.client.scan(cursor, 'MATCH', match, 'COUNT', count)) as [string, string[]],
    }
    const found = await findResources([node], prefix, undefined, 10)
    expect(found.length).toBe(52)
    expect(found.filter((f) => f.kind === 'mutex').length).toBe(50)
    expect(found).toContainEqual({ kind: 'semaphore', name: 's' })
    expect(found).toContainEqual({ kind: 'read-write', name: 'rw' })
    expect(await findResources([node], prefix, 'm1*', 10)).toHaveLength(11)
  })
})
