// The commit step of a quorum acquire, once per client adapter on 3 masters: a lease exists only
// once a majority of nodes confirmed that this token still holds the lock there and took its fence.
// Two of the three nodes granted, but by the time the confirm reaches them (their replies are
// slowed by fault proxies) another token holds the lock there: one confirming node is not enough.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, QuorumError, type Locks } from '../../../src/index.js'
import { adapters, type TestClient } from '../../../harness/clients.js'
import { startFaultProxy, type FaultProxy } from '../../../harness/fault-proxy.js'
import { mature, requireRedisOrSkip, startRedis, type RedisProcess } from '../../../harness/redis-server.js'
import { closeQuietly, keysOf, uniquePrefix, until } from '../../../harness/util.js'

// A restarted (or new) node counts once its uptime reaches maxTtl: keep it short in tests.
const MAX_TTL = 2_000
const DELAY = 300 // on the replies of nodes 1 and 2: the window in which their grants are taken away

describe.skipIf(!requireRedisOrSkip())('quorum commit step', () => {
  let nodes: RedisProcess[] = []
  let proxies: FaultProxy[] = []
  beforeAll(async () => {
    nodes = await Promise.all([0, 1, 2].map(() => startRedis()))
    proxies = await Promise.all(nodes.slice(1).map((n) => startFaultProxy(n)))
    await mature(nodes, MAX_TTL)
  })
  afterAll(async () => {
    await Promise.all(proxies.map((p) => p.close()))
    await Promise.all(nodes.map((n) => n.stop()))
  })

  describe.each(adapters)('$name', (adapter) => {
    let control: TestClient[] = [] // straight to each node
    let quorum: TestClient[] = [] // node 0 straight, nodes 1 and 2 through their proxies
    let locks: Locks
    let prefix: string
    beforeAll(async () => {
      control = await Promise.all(nodes.map((n) => adapter.connect(n.url)))
      quorum = await Promise.all([nodes[0]!.url, ...proxies.map((p) => p.url)].map((url) => adapter.connect(url)))
      prefix = uniquePrefix('quorum-commit')
      locks = createLocks({ redis: quorum.map((c) => c.raw), prefix, maxTtl: MAX_TTL, ttl: MAX_TTL, quorum: { nodeTimeout: 1_500 } })
    })
    afterAll(async () => {
      for (const p of proxies) p.heal()
      await closeQuietly([locks])
      await Promise.all([...quorum, ...control].map((c) => c.disconnect()))
    })

    it('granted by 3 nodes, confirmed by 1 (the other two lost the lock before the confirm): QuorumError, no lease, node 0 undone', async () => {
      const { lock } = keysOf(prefix, 'commit')
      for (const p of proxies) p.setDelay(DELAY, { direction: 'down' })
      const acquiring = locks.tryAcquire('commit')
      acquiring.catch(() => {})
      // Nodes 1 and 2 granted (their replies are still on the way): another token takes the lock there.
      await until('nodes 1 and 2 granted', async () => (await Promise.all(control.slice(1).map((c) => c.command('GET', lock)))).every(Boolean), {
        timeout: DELAY / 2,
      })
      for (const c of control.slice(1)) await c.command('SET', lock, 'another-holder', 'PX', 10_000)
      const err = await acquiring.then(
        (lease) => lease,
        (e: unknown) => e,
      )
      for (const p of proxies) p.heal()
      expect(err).toBeInstanceOf(QuorumError)
      expect((err as Error).message).toContain('commit')
      await until('node 0 gave back its grant', async () => (await control[0]!.command('GET', lock)) === null, { timeout: 2_000 })
      for (const c of control.slice(1)) expect(await c.command('GET', lock)).toBe('another-holder')
    })
  })
})
