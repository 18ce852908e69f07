// Every TypeScript block of README.md and docs/*.md compiles (the repository's strict options,
// `fencelock` resolved to src/), and runs against a redis-server started here, unless its
// directive says why it cannot (harness/markdown-snippets.ts); every SQL block runs on the
// local PostgreSQL. A block may connect to Redis only through REDIS_URL, which points here.
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pgConfig, requirePgOrSkip } from '../../harness/postgres.js'
import { moduleOf, snippetsOf, type Snippet } from '../../harness/markdown-snippets.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { typeErrors } from '../../harness/low-priority.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const docs = [
  'README.md',
  ...readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]
const snippets = docs.flatMap((file) => snippetsOf(root, file))
const typescript = snippets.filter((s) => s.lang === 'ts' || s.lang === 'typescript')
const runnable = typescript.filter((s) => s.checkOnly === undefined)
const sql = snippets.filter((s) => s.lang === 'sql')
const fileOf = (s: Snippet) => `${s.where.replace(/[/:]/g, '-')}.mts`

const redisReady = requireRedisOrSkip()
const pgReady = await requirePgOrSkip()

// `@opentelemetry/sdk-node` is not a dev dependency (it brings every exporter): docs/otel.md's
// NodeSDK block is checked against this much of its API, and never run.
const sdkNode = `declare module '@opentelemetry/sdk-node' {
  export class NodeSDK {
    constructor(configuration?: object)
    start(): void
    shutdown(): Promise<void>
  }
}
`

/** The repository's own compiler options, with `fencelock`, `fencelock/otel` and `fencelock/redis-semaphore` mapped to src/. */
function tsconfigFor(files: string[]): object {
  const { compilerOptions } = JSON.parse(readFileSync(path.join(root, 'tsconfig.json'), 'utf8')) as { compilerOptions: object }
  const paths = {
    fencelock: [path.join(root, 'src', 'index.ts')],
    'fencelock/otel': [path.join(root, 'src', 'otel', 'index.ts')],
    'fencelock/redis-semaphore': [path.join(root, 'src', 'compat', 'redis-semaphore', 'index.ts')],
  }
  return { compilerOptions: { ...compilerOptions, paths }, files }
}

interface Exit {
  code: number | null
  output: string
}

function runModule(file: string, cwd: string, env: Record<string, string>, ms = 20_000): Promise<Exit> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    // A block that leaks a connection or a timer never exits: that fails it too.
    const timer = setTimeout(() => {
      output += `\n[did not exit within ${ms} ms]`
      child.kill('SIGKILL')
    }, ms)
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })
}

describe('docs snippets', () => {
  let project: string
  beforeAll(() => {
    const cache = path.join(root, 'node_modules', '.cache')
    mkdirSync(cache, { recursive: true })
    project = mkdtempSync(path.join(cache, 'fencelock-snippets-'))
    writeFileSync(path.join(project, 'package.json'), '{ "private": true, "type": "module" }\n')
    writeFileSync(path.join(project, 'sdk-node.d.ts'), sdkNode)
    // At run time, `fencelock` is a package of this directory that re-exports src/ (tsx applies no
    // tsconfig paths below node_modules, where this directory is so that ioredis etc. resolve).
    const pkg = path.join(project, 'node_modules', 'fencelock')
    mkdirSync(pkg, { recursive: true })
    const exports = { '.': './index.ts', './otel': './otel.ts', './redis-semaphore': './redis-semaphore.ts' }
    writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'fencelock', type: 'module', exports }))
    writeFileSync(path.join(pkg, 'index.ts'), `export * from ${JSON.stringify(path.join(root, 'src', 'index.ts'))}\n`)
    writeFileSync(path.join(pkg, 'otel.ts'), `export * from ${JSON.stringify(path.join(root, 'src', 'otel', 'index.ts'))}\n`)
    writeFileSync(path.join(pkg, 'redis-semaphore.ts'), `export * from ${JSON.stringify(path.join(root, 'src', 'compat', 'redis-semaphore', 'index.ts'))}\n`)
    for (const snippet of typescript) writeFileSync(path.join(project, fileOf(snippet)), `// ${snippet.where}\n${moduleOf(root, snippet)}`)
    const files = ['sdk-node.d.ts', ...typescript.map(fileOf)]
    writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify(tsconfigFor(files), null, 2))
  })
  afterAll(() => {
    if (project) rmSync(project, { recursive: true, force: true })
  })

  it('finds the blocks, and says why each one that does not run cannot', () => {
    expect(typescript.length).toBeGreaterThanOrEqual(8)
    // Check-only, each with its reason: the quorum/cluster block, the OpenTelemetry NodeSDK block, the leader's endless loop of docs/election.md.
    expect(runnable.length).toBeGreaterThanOrEqual(typescript.length - 3)
    expect(sql.length).toBeGreaterThanOrEqual(1)
  })

  it('type-checks every TypeScript block', { timeout: 120_000 }, async () => {
    const errors = await typeErrors(['-p', project], project)
    expect(errors).toBe('')
  })

  describe.skipIf(!redisReady)('runs', () => {
    let redis: RedisProcess
    beforeAll(async () => {
      redis = await startRedis()
    })
    afterAll(async () => {
      await redis?.stop()
    })

    it.each(runnable.map((s) => [s.where, s] as const))('%s', async (_, snippet) => {
      // Anything else would reach whichever Redis listens on the default port.
      if (/new (Redis|Cluster)\(|create(Client|Cluster|Sentinel)\(/.test(moduleOf(root, snippet))) {
        expect(moduleOf(root, snippet), 'a block that makes a client connects through REDIS_URL').toMatch(/process\.env\.REDIS_URL/)
      }
      const { code, output } = await runModule(fileOf(snippet), project, { REDIS_URL: redis.url })
      expect({ code, output }).toEqual({ code: 0, output: expect.any(String) })
      // Every mutex it took was given back.
      expect((await redis.cli('--scan', '--pattern', '*:L')).split('\n').filter(Boolean)).toEqual([])
    })
  })

  describe.skipIf(!pgReady)('runs on PostgreSQL', () => {
    // Each statement as written, in a schema of its own; one with parameters is PREPAREd, which is
    // where PostgreSQL checks that it can type each of $1..$n.
    it.each(sql.map((s) => [s.where, s] as const))('%s', async (_, snippet) => {
      const db = new pg.Client(pgConfig())
      await db.connect()
      const schema = `snippet_${process.pid}`
      try {
        await db.query(`CREATE SCHEMA ${schema}`)
        await db.query(`SET search_path TO ${schema}`)
        const statements = snippet.code
          .replace(/--.*$/gm, '')
          .split(';')
          .map((s) => s.trim())
          .filter((s) => s && !s.startsWith('...'))
        for (const [i, statement] of statements.entries()) {
          if (/\$\d/.test(statement)) {
            await db.query(`PREPARE snippet_${i} AS ${statement}`).catch((err: Error) => {
              throw new Error(`${snippet.where}: ${statement}: ${err.message}`)
            })
            await db.query(`DEALLOCATE snippet_${i}`)
          } else {
            await db.query(statement)
          }
        }
      } finally {
        await db.query('ROLLBACK').catch(() => {})
        await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
        await db.end()
      }
    })
  })
})
