// `npm run demo` (examples/payment-demo.ts) against a harness-started redis-server.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { describeRedis } from '../../harness/per-adapter.js'

const root = fileURLToPath(new URL('../..', import.meta.url))

// A guard against a hang, not a speed goal: the demo takes about 15 s on 2 idle cores (43 s was
// seen on a loaded one); one still running after 10x that is killed, and its run reports `hung`.
// (The test's own timeout is this plus 10 s.)
const HANG_LIMIT_MS = 150_000

function demo(env: NodeJS.ProcessEnv): Promise<{ code: number | null; hung: boolean; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'examples', 'payment-demo.ts')], { cwd: root, env })
  let stdout = ''
  let stderr = ''
  let hung = false
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const killer = setTimeout(() => {
    hung = true
    child.kill('SIGKILL')
  }, HANG_LIMIT_MS)
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(killer)
      resolve({ code, hung, stdout, stderr })
    }),
  )
}

describeRedis('payment demo', (server) => {
  it('loses updates without a lock; keeps the balance exact with fencelock, even past a frozen holder; transfers conserve the total only with fencelock', async () => {
    const { code, hung, stdout, stderr } = await demo({ ...process.env, REDIS_URL: server.url })
    expect(hung, `the demo ended by itself (not killed after 150 s); its output so far:\n${stdout}${stderr}`).toBe(false)
    expect(stderr).toBe('')
    expect(code).toBe(0)

    const line = stdout.split('\n').find((l) => l.startsWith('RESULT '))
    expect(line, stdout).toBeDefined()
    const result = Object.fromEntries(
      line!
        .slice('RESULT '.length)
        .split(' ')
        .map((pair) => pair.split('='))
        .map(([k, v]) => [k, Number(v)]),
    )
    // (a) no lock: the balance does not match what was paid out.
    expect(result.unlocked_balance).not.toBe(result.unlocked_expected)
    expect(result.unlocked_balance).toBeGreaterThan(result.unlocked_expected)
    // (b) fencelock: exact, and the account was drained exactly, never overdrawn.
    expect(result.locked_balance).toBe(result.locked_expected)
    expect(result.locked_balance).toBe(0)
    // (c) the frozen holder's stale write was refused, its signal aborted, the balance exact.
    expect(result.stale_rejected).toBe(1)
    expect(result.signal_aborted).toBe(1)
    expect(result.stale_balance).toBe(result.stale_expected)
    // (d) transfers between 4 accounts: without a lock updates are lost on every account and money
    // is created or destroyed; with withLocks + the fenced guards the total and every balance are exact.
    expect(result.transfer_unlocked_total).not.toBe(result.transfer_expected_total)
    expect(result.transfer_unlocked_accounts_exact).toBe(0)
    expect(result.transfer_locked_total).toBe(result.transfer_expected_total)
    expect(result.transfer_locked_accounts_exact).toBe(1)
    expect(result.transfer_locked_transfers, 'most transfers moved money').toBeGreaterThan(50)
    expect(result.ok).toBe(1)
    expect(stdout).toContain('rejected by the fence')
    expect(stdout).toMatch(/no lock:\n.*\n +total \d+, should be \d+: wrong, \d+ (created out of nothing|destroyed)\n/)

    // A shared Redis (REDIS_URL) is left as it was found.
    expect(await server.redis.cli('DBSIZE')).toBe('0')
  }, 160_000)
})

describe('payment demo without Redis', () => {
  it('without REDIS_URL and without redis-server on PATH, says how to install Redis and exits 1', async () => {
    const emptyPath = mkdtempSync(path.join(os.tmpdir(), 'fencelock-no-redis-'))
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, PATH: emptyPath }
      delete env.REDIS_URL
      const { code, stdout, stderr } = await demo(env)
      expect(code).toBe(1)
      expect(stdout).toBe('')
      expect(stderr).toContain('redis-server was not found on PATH')
      expect(stderr).toContain('apt-get install redis-server')
      expect(stderr).toContain('brew install redis')
    } finally {
      rmSync(emptyPath, { recursive: true, force: true })
    }
  })
})
