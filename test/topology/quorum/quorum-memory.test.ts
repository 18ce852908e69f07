// What a quorum's wake-ups keep once waits are over: nothing. Each wait's listener is wrapped once
// per node (to count a release's copies until a majority published it); the wrappers were kept in
// a Map that nothing emptied, so every wait of a long-running process left three closures and their
// counters behind (the 60-minute soak: about 0.3 MiB a minute on each quorum worker).
import v8 from 'node:v8'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type Locks } from '../../../src/index.js'
import { mature, requireRedisOrSkip, startRedis, type RedisProcess } from '../../../harness/redis-server.js'
import { until } from '../../../harness/until.js'

const MAX_TTL = 1_000

v8.setFlagsFromString('--expose-gc')
const gc = (await import('node:vm')).runInNewContext('gc') as () => void

/** Closures of function `name` alive in this process after a full collection (a heap snapshot's count). */
async function closuresNamed(name: string): Promise<number> {
  gc()
  let json = ''
  for await (const chunk of v8.getHeapSnapshot()) json += chunk
  const snapshot = JSON.parse(json) as { snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }; nodes: number[]; strings: string[] }
  const fields = snapshot.snapshot.meta.node_fields
  const [typeAt, nameAt, width] = [fields.indexOf('type'), fields.indexOf('name'), fields.length]
  const closure = snapshot.snapshot.meta.node_types[0].indexOf('closure')
  let count = 0
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    if (snapshot.nodes[i + typeAt] === closure && snapshot.strings[snapshot.nodes[i + nameAt]!] === name) count++
  }
  return count
}

describe.skipIf(!requireRedisOrSkip())('quorum wake-ups over many waits', () => {
  let servers: RedisProcess[] = []
  const clients: Redis[] = []
  let holder: Locks
  let waiter: Locks

  beforeAll(async () => {
    servers = await Promise.all([0, 1, 2].map(() => startRedis()))
    const make = () => {
      const raw = servers.map((s) => new Redis(s.url))
      clients.push(...raw)
      return createLocks({ redis: raw, maxTtl: MAX_TTL, ttl: MAX_TTL, quorum: { nodeTimeout: 250 } })
    }
    holder = make()
    waiter = make()
    await mature(servers, MAX_TTL)
  })

  afterAll(async () => {
    await holder?.close()
    await waiter?.close()
    for (const c of clients) c.disconnect()
    await Promise.all(servers.map((s) => s.stop()))
  })

  it('keeps no wrapper of a wait that is over', async () => {
    const before = await closuresNamed('heardFrom')
    for (let i = 0; i < 30; i++) {
      const held = await holder.acquire(`m${i}`)
      const waiting = waiter.acquire(`m${i}`, { wait: 10_000 })
      await until(`waiter ${i} in line`, async () => (await waiter.inspect(`m${i}`)).waiters === 1)
      await held.release()
      await (await waiting).release()
    }
    // 30 waits: 30 counters (with 3 wrappers each, one per node) when they are kept; a few at most
    // may still be in flight.
    await until('the waits left nothing behind', async () => (await closuresNamed('heardFrom')) <= before + 3, { timeout: 10_000, every: 200 })
    expect(await closuresNamed('heardFrom')).toBeLessThan(before + 30)
  })
})
