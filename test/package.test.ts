// The published shape: both builds load, types resolve under every module mode, and publint is happy.
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

describe('package', () => {
  it('builds, loads as ESM and CommonJS, and passes publint and attw', { timeout: 120_000 }, async () => {
    run('npx', ['tsup', '--silent'])
    const esm = await import(new URL('../dist/index.js', import.meta.url).href)
    const cjs = createRequire(import.meta.url)('../dist/index.cjs')
    for (const mod of [esm, cjs]) {
      expect(typeof mod.createLocks).toBe('function')
      expect(typeof mod.fencedSet).toBe('function')
      expect(new mod.LockTimeoutError('r', 5).code).toBe('LOCK_TIMEOUT')
    }
    expect(run('npx', ['publint', '--strict'])).not.toMatch(/error|warning/i)
    // attw exits non-zero on any problem for the node16 (CJS and ESM) and bundler resolutions.
    run('npx', ['attw', '--pack', '.', '--profile', 'node16', '--format', 'ascii'])
  })
})
