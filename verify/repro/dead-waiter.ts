// Liveness finding from `npm run verify` (docs/verify.md, finding 2): a waiter that dies while
// queued (kill -9, or cut off as here) keeps its place in the fair queue until the holder's
// remaining ttl at the time it queued plus a fixed 2 s grace, even when the holder releases at
// once: a free resource stays unacquirable for more than one ttl.
//   npx tsx verify/repro/dead-waiter.ts [ttl ms, default 10000]   (exit 1 while the finding holds)
import { Redis } from 'ioredis'
import { createLocks } from '../../src/index.js'
import { startRedis } from '../../test/support/redis-server.js'
import { startFaultProxy } from '../../test/support/fault-proxy.js'
const ttl = Number(process.argv[2] ?? 10_000)
const node = await startRedis()
const proxy = await startFaultProxy({ host: node.host, port: node.port })
const a = new Redis({ port: node.port }), c = new Redis({ port: node.port }), w = new Redis({ port: proxy.port, maxRetriesPerRequest: 1 })
for (const x of [a, c, w]) x.on('error', () => {})
const la = createLocks({ redis: a, ttl }), lc = createLocks({ redis: c, ttl }), lw = createLocks({ redis: w, ttl })
const lease = await la.acquire('r')
const waiting = lw.acquire('r', { wait: 30_000 }).catch((e) => e)
await new Promise((r) => setTimeout(r, 200))   // W has queued in Redis
proxy.partition()                               // W dies, as far as Redis can tell (like kill -9)
await lease.release()
const t = performance.now()
const got = await lc.acquire('r', { wait: 30_000 })
const waited = performance.now() - t
console.log(`ttl ${ttl}: released by its holder, yet C acquired only after ${Math.round(waited)} ms (${waited > ttl ? 'more' : 'less'} than one ttl)`)
process.exitCode = waited > ttl ? 1 : 0
await got.release()
// W is still cut off; the test harness kills the redis-server on exit.
void waiting
process.exit(process.exitCode)
