// The path of an uncontended acquire, measured: which src/ files run code between the call of
// `locks.acquire` and the client's `evalsha` (V8's precise coverage, in a process of its own:
// hot-path-probe.ts). ARCHITECTURE.md walks the same path by name; this test keeps the count from
// growing unnoticed and prints the list, so a change that adds a file to the hot path says so in
// its run. Lower the bounds when the path gets shorter.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { lowPriority, lowPriorityEnv } from '../../harness/low-priority.js'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** Files entered on 7 Dec 2026: 15 for a resource locked before (its keys cached), 16 for a new one. */
const MOST_FILES: Readonly<Record<string, number>> = { known: 15, fresh: 16 }

describe.skipIf(!requireRedisOrSkip())('the hot path of an uncontended acquire', () => {
  let server: RedisProcess

  beforeAll(async () => {
    server = await startRedis()
  })

  afterAll(async () => {
    await server?.stop()
  })

  it(`crosses at most ${MOST_FILES.known} src files for a resource locked before, ${MOST_FILES.fresh} for a new one`, async () => {
    // At the lowest priority and with one compiler thread: a measurement with no clock in it must
    // not take the cores from the suite's timed tests running beside it.
    const probe = lowPriority(process.execPath, ['--import', 'tsx', 'test/architecture/hot-path-probe.ts', String(server.port)])
    const { stdout } = await promisify(execFile)(...probe, { cwd: root, env: lowPriorityEnv() })
    const paths = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, Record<string, string[]> | undefined>
    for (const [resource, most] of Object.entries(MOST_FILES)) {
      const files = paths[resource]
      expect(files, `the acquire of a ${resource} resource reached the client`).toBeDefined()
      const names = Object.keys(files!)
      console.log(`[hot path] ${resource} resource: ${names.length} src files\n${names.map((f) => `  ${f}: ${files![f]!.join(', ')}`).join('\n')}`)
      // The path starts in the facade and ends in the adapter: the measurement saw both ends.
      expect(names).toEqual(expect.arrayContaining(['src/api/locks.ts', 'src/runtime/attempt.ts', 'src/redis/ioredis.ts']))
      expect(names.length).toBeLessThanOrEqual(most)
    }
  }, 120_000) // a process of its own that compiles the sources: seconds, more on a busy machine
})
