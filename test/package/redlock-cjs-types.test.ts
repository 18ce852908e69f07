// `fencelock/redlock` to a CommonJS user of node-redlock v4, as published: `require` gives the
// class itself, and the declarations say so (a `// @ts-check` script and an
// `import Redlock = require(...)` in a .cts file construct it, as they do with redlock 4.2.0);
// its Lock prints as `Lock`, not as a bundler's renamed `_Lock`.
import { execFile } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installBuiltPackage } from './installed-package.js'
import { typeErrors } from '../../harness/low-priority.js'

const run = promisify(execFile)

const checkedJs = `// @ts-check
const Redlock = require('fencelock/redlock')
const { Redis } = require('ioredis')

const redlock = new Redlock([new Redis()], { retryCount: 3 })
redlock.lock('orders:42', 1000).then((lock) => lock.unlock(), (err) => {
  if (err instanceof Redlock.LockError) return undefined
  throw err
})
/** @type {import('fencelock/redlock').Lock | undefined} */
let kept
void kept
`

const cts = `import Redlock = require('fencelock/redlock')
import { Redis } from 'ioredis'

export async function main(): Promise<number | undefined> {
  const redlock = new Redlock([new Redis()], { retryCount: 0 })
  const lock: Redlock.Lock = await redlock.lock('orders:42', 1000)
  const settings: Redlock.Settings = { retryDelay: 100 }
  const again = new Redlock.Redlock([new Redis()], settings)
  await again.quit()
  if (lock.signal.aborted) throw new Redlock.LockError('lost')
  // @ts-expect-error: a ttl is a number of ms
  await redlock.lock('orders:43', '1s')
  return lock.fence
}
`

describe('fencelock/redlock to a CommonJS consumer, as published', () => {
  let project: string
  beforeAll(async () => {
    project = await installBuiltPackage('fencelock-redlock-cjs-')
    writeFileSync(path.join(project, 'checked.js'), checkedJs)
    writeFileSync(path.join(project, 'consumer.cts'), cts)
    writeFileSync(
      path.join(project, 'tsconfig.json'),
      `${JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'nodenext',
          strict: true,
          types: ['node'],
          allowJs: true,
          checkJs: true,
          skipLibCheck: false,
          noEmit: true,
        },
        files: ['checked.js', 'consumer.cts'],
      })}\n`,
    )
  }, 240_000)
  afterAll(() => rmSync(project, { recursive: true, force: true }))

  it('type-checks require() under @ts-check and import = require() in a .cts file', { timeout: 120_000 }, async () => {
    const output = await typeErrors(['-p', 'tsconfig.json'], project)
    expect(output).toBe('')
  })

  it('Lock is named Lock, and prints so, under require and import', async () => {
    const script = `
      const { inspect } = require('node:util')
      const { Lock } = require('fencelock/redlock')
      import('fencelock/redlock').then((m) => {
        const made = (L) => inspect(new L({}, ['r'], 'v', [], 0)).split(' ')[0]
        console.log(JSON.stringify([Lock.name, made(Lock), m.Lock.name, made(m.Lock)]))
      })`
    const { stdout } = await run(process.execPath, ['-e', script], { cwd: project })
    expect(JSON.parse(stdout)).toEqual(['Lock', 'Lock', 'Lock', 'Lock'])
  })
})
