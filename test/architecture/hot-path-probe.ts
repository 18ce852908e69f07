// Run by hot-path.test.ts in a process of its own (tsx: the sources as plain ES modules, no test
// runner's module wrappers, whose export getters would count as code run in the exporting file).
// Prints, as JSON, which src/ files ran code between the call of `locks.acquire` and the client's
// evalsha, for a resource locked before and for a new one. Argument: the Redis port.
import { Session } from 'node:inspector'
import { Redis } from 'ioredis'
import { createLocks } from '../../src/index.js'

interface Coverage {
  result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[]
}

const session = new Session()
session.connect()
/** The inspector answers in the same turn: the callback runs before post returns. */
function post(method: string, params?: object): unknown {
  let answer: unknown
  session.post(method, params, (err, result) => {
    if (err) throw err
    answer = result
  })
  return answer
}

/** The src/ files (and the functions in each) that ran since the last snapshot. */
function filesRun(coverage: Coverage): Record<string, string[]> {
  const files: Record<string, string[]> = {}
  for (const script of coverage.result) {
    const at = script.url.lastIndexOf('/src/')
    if (at < 0 || script.url.includes('/node_modules/')) continue
    const ran = script.functions.filter((f) => f.ranges[0]!.count > 0).map((f) => f.functionName || '(anonymous)')
    if (ran.length > 0) files[script.url.slice(at + 1)] = ran
  }
  return files
}

post('Profiler.enable')
post('Profiler.startPreciseCoverage', { callCount: true, detailed: false })
const client = new Redis({ port: Number(process.argv[2]), host: '127.0.0.1' })
const locks = createLocks({ redis: client })
// Warm: every script loaded, the instance's first acquire done, 'known' locked once.
for (let i = 0; i < 20; i++) await (await locks.acquire('warm')).release()
await (await locks.acquire('known')).release()

let snapshot: Coverage | undefined
const c = client as unknown as Record<'evalsha' | 'sendCommand', (...args: unknown[]) => unknown>
for (const method of ['evalsha', 'sendCommand'] as const) {
  const original = c[method]
  c[method] = function (this: unknown, ...args: unknown[]) {
    snapshot ??= post('Profiler.takePreciseCoverage') as Coverage
    return original.apply(this, args)
  }
}
const paths: Record<string, Record<string, string[]> | undefined> = {}
for (const resource of ['known', 'fresh']) {
  snapshot = undefined
  post('Profiler.takePreciseCoverage') // resets the counts
  await (await locks.acquire(resource)).release()
  paths[resource] = snapshot && filesRun(snapshot)
}
await locks.close()
client.disconnect()
console.log(JSON.stringify(paths))
