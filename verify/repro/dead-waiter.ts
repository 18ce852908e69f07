// Liveness finding 2 of `npm run verify` (docs/evidence/verify.md): a waiter that dies while queued (kill -9,
// or cut off as here) keeps its place in the fair queue until "the holder's remaining ttl when it
// queued + 2 s grace", even when the holder releases at once; a waiter that queues behind a dead
// head gets a place lasting until that head's expiry + 2 s, so dead waiters add up.
//   npx tsx verify/repro/dead-waiter.ts [ttl ms, default 10000]   (exit 1 while the finding holds)
import { Redis } from 'ioredis'
import { createLocks, type Locks } from '../../src/index.js'
import { startRedis } from '../../harness/redis-server.js'
import { startFaultProxy, type FaultProxy } from '../../harness/fault-proxy.js'

const ttl = Number(process.argv[2] ?? 10_000)
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const node = await startRedis()
const locksOn = (port: number): Locks => {
  const redis = new Redis({ port, maxRetriesPerRequest: 1 })
  redis.on('error', () => {})
  return createLocks({ redis, ttl })
}
/** A client that queues for `resource`, then is cut off from Redis: a dead waiter, as far as Redis can tell. */
async function deadWaiter(resource: string): Promise<FaultProxy> {
  const proxy = await startFaultProxy({ host: node.host, port: node.port })
  void locksOn(proxy.port)
    .acquire(resource, { wait: 60_000 })
    .catch(() => {})
  await sleep(200)
  proxy.partition()
  return proxy
}
const holder = locksOn(node.port)
const fresh = locksOn(node.port)
let worst = 0

// 1. One dead waiter; the holder releases at once.
{
  const lease = await holder.acquire('one')
  await deadWaiter('one')
  await lease.release()
  const t = performance.now()
  await (await fresh.acquire('one', { wait: 60_000 })).release()
  const waited = performance.now() - t
  worst = Math.max(worst, waited)
  console.log(`ttl ${ttl}: released at once, one dead waiter: a fresh client waited ${Math.round(waited)} ms`)
}
// 2. A second waiter queues behind the dead head (the lock is free), then dies too.
{
  const lease = await holder.acquire('two')
  await deadWaiter('two')
  await lease.release()
  const t = performance.now()
  await deadWaiter('two')
  await (await fresh.acquire('two', { wait: 60_000 })).release()
  const waited = performance.now() - t
  worst = Math.max(worst, waited)
  console.log(`ttl ${ttl}: released at once, two dead waiters: a fresh client waited ${Math.round(waited)} ms`)
}
console.log(worst > ttl ? 'more than one ttl: the finding holds' : 'within one ttl')
// The cut-off clients are left as they are; the test harness kills the redis-server on exit.
process.exit(worst > ttl ? 1 : 0)
