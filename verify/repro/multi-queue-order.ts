// Two all-or-nothing waiters for the same pair [A, B] can wait for each other until one of them
// gives up, with both locks free. X's place in A's queue is capped at the grace when A is released
// to it; X's next attempt comes late (its connection is slow), after Y (on standby) has looked
// again and pruned X from A. X then rejoins A with a new score, behind Y, but keeps its old score
// in B, ahead of Y: in A, X waits for Y; in B, Y waits for X.
// `npx tsx verify/repro/multi-queue-order.ts`: exits 1 if, after the last release, the pair was not
// taken within one ttl (1 s).
import { Redis } from 'ioredis'
import { createLocks } from '../../src/index.js'
import { startFaultProxy } from '../../harness/fault-proxy.js'
import { startRedis } from '../../harness/redis-server.js'

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const redis = await startRedis()
const proxy = await startFaultProxy({ host: redis.host, port: redis.port })
const direct = [new Redis(redis.url), new Redis(redis.url)]
const slow = new Redis({ host: proxy.host, port: proxy.port })
const options = { prefix: 'repro:', ttl: 1_000 } // waiterGrace: a quarter of the ttl, 250 ms
const h = createLocks({ redis: direct[0]!, ...options })
const y = createLocks({ redis: direct[1]!, ...options })
const x = createLocks({ redis: slow, ...options })
let code = 0
try {
  const a = await h.acquire('A', { ttl: 10_000 })
  const b = await h.acquire('B', { ttl: 10_000 })
  const t0 = performance.now()
  const at = () => `${Math.round(performance.now() - t0)} ms`
  const xDone = x.acquireAll(['A', 'B'], { wait: 6_000 }).then(
    (l) => (console.log(`X got [A, B] at ${at()}`), l.release()),
    (e: Error) => console.log(`X: ${e.message} at ${at()}`),
  )
  await sleep(100)
  const yDone = y.acquireAll(['B', 'A'], { wait: 6_000 }).then(
    (l) => (console.log(`Y got [A, B] at ${at()}`), l.release()),
    (e: Error) => console.log(`Y: ${e.message} at ${at()}`),
  )
  await sleep(200)
  proxy.setDelay(300) // from now on X hears and answers late
  await a.release()
  console.log(`A released at ${at()}`)
  await sleep(1_500)
  proxy.heal()
  const last = performance.now()
  await b.release()
  console.log(`B released at ${at()}: both locks free`)
  await Promise.all([xDone, yDone])
  const took = performance.now() - last
  console.log(`both transfers done ${Math.round(took)} ms after the last release`)
  if (took > 1_000) code = 1
} finally {
  await Promise.all([h, x, y].map((l) => l.close()))
  for (const c of [...direct, slow]) c.disconnect()
  await proxy.close()
  await redis.stop()
}
process.exit(code)
