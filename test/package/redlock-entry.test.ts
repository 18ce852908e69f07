// `fencelock/redlock` as a consumer gets it: the package is built into a private directory and
// installed under the name `fencelock`; `import Redlock from 'fencelock/redlock'` and
// `require('fencelock/redlock')` (the class itself, as `require('redlock')` is) both load, and a
// TypeScript consumer of each kind (and an ESM one under a bundler's resolution) type-checks
// against the published declarations.
import { execFile } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installBuiltPackage } from './installed-package.js'
import { typeErrors } from '../../harness/low-priority.js'

const run = promisify(execFile)

const esm = `import Redlock, { ExecutionError, Lock, LockError, ResourceLockedError, type Settings } from 'fencelock/redlock'
import { Redis } from 'ioredis'

export async function main(url: string): Promise<number | undefined> {
  const settings: Settings = { retryCount: 3, retryDelay: 100 }
  const redlock = new Redlock([new Redis(url)], settings)
  const lock: Lock = await redlock.acquire(['a'], 1000)
  await redlock.using(['b'], 5000, async (signal) => signal.aborted || signal.error === undefined)
  if (lock.signal.aborted) throw new LockError('lost')
  const fence: number | undefined = lock.fence
  await lock.release().catch((err: unknown) => {
    if (err instanceof ExecutionError || err instanceof ResourceLockedError) return undefined
    throw err
  })
  // @ts-expect-error: a duration is a number of ms
  await redlock.acquire(['c'], '1s')
  return fence
}
`

const cjs = `import Redlock = require('fencelock/redlock')
import { Redis } from 'ioredis'

export function main(url: string): Promise<unknown> {
  const redlock = new Redlock.Redlock([new Redis(url)], { retryCount: 0 })
  return redlock.lock('a', 1000, (err, lock) => {
    if (err instanceof Redlock.LockError) return
    void lock?.unlock()
  })
}
`

describe('fencelock/redlock as published', () => {
  let project: string
  beforeAll(async () => {
    project = await installBuiltPackage('fencelock-redlock-', { type: 'module' })
    writeFileSync(path.join(project, 'esm.mts'), esm)
    writeFileSync(path.join(project, 'cjs.cts'), cjs)
    writeFileSync(
      path.join(project, 'tsconfig.json'),
      `${JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'nodenext', strict: true, types: ['node'], skipLibCheck: false, noEmit: true }, files: ['esm.mts', 'cjs.cts'] })}\n`,
    )
    // A bundler's consumer: the ESM declarations re-export the CommonJS ones (export = Redlock),
    // which it reaches by a default import without esModuleInterop.
    writeFileSync(path.join(project, 'bundled.ts'), esm)
    writeFileSync(
      path.join(project, 'tsconfig.bundler.json'),
      `${JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'esnext', moduleResolution: 'bundler', strict: true, types: ['node'], skipLibCheck: false, noEmit: true }, files: ['bundled.ts'] })}\n`,
    )
  }, 240_000)
  afterAll(() => rmSync(project, { recursive: true, force: true }))

  it('loads with import (the class as default, the named exports beside it) and with require (the class itself)', async () => {
    const script = `
      import Redlock, { Redlock as Named, ExecutionError, Lock, LockError, ResourceLockedError } from 'fencelock/redlock'
      import { createRequire } from 'node:module'
      const required = createRequire(import.meta.url)('fencelock/redlock')
      console.log(JSON.stringify({
        esm: [typeof Redlock, Redlock === Named, typeof ExecutionError, Redlock.Lock === Lock, Redlock.LockError === LockError, typeof ResourceLockedError],
        cjs: [typeof required, required.name, required.default === required, typeof required.ExecutionError, typeof required.Lock, typeof required.LockError],
      }))`
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: project })
    expect(JSON.parse(stdout)).toEqual({
      esm: ['function', true, 'function', true, true, 'function'],
      cjs: ['function', 'Redlock', true, 'function', 'function', 'function'],
    })
  })

  it.each(['tsconfig.json', 'tsconfig.bundler.json'])('type-checks an ESM and a CommonJS consumer (%s)', { timeout: 120_000 }, async (config) => {
    const output = await typeErrors(['-p', config], project)
    expect(output).toBe('')
  })
})
