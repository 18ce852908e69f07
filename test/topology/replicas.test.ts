// Replica-acknowledged locks with a real primary and replica: WAIT pipelined behind the acquire
// script, a paused replica makes acquire fail (and roll back), and after a failover the promoted
// replica still has the lock and its fence.
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, InvalidArgumentError, RedisError, ReplicationError, type Locks, type RedisClient } from '../../src/index.js'
import { callsOfAll } from '../../harness/commandstats.js'
import { requireRedisOrSkip, startReplicated, type ReplicatedPair } from '../../harness/redis-server.js'
import { until } from '../../harness/until.js'
import { tokenIn } from '../../harness/util.js'

type Connect = (url: string) => Promise<{ raw: RedisClient; close(): Promise<void> }>

const adapters: { name: string; connect: Connect }[] = [
  {
    name: 'ioredis',
    async connect(url) {
      const client = new Redis(url, { maxRetriesPerRequest: 1 })
      client.on('error', () => {})
      return { raw: client, close: async () => client.disconnect() }
    },
  },
  {
    name: 'node-redis',
    async connect(url) {
      const client = createClient({ url, socket: { reconnectStrategy: false } })
      client.on('error', () => {})
      await client.connect()
      return { raw: client, close: async () => void (client.isOpen && client.destroy()) }
    },
  },
]

const REPLICAS = { count: 1, timeout: 300 }

describe.skipIf(!requireRedisOrSkip())('replicas option', () => {
  it('is checked: a positive count and timeout, never with a cluster or in quorum mode', async () => {
    const client = new Redis({ lazyConnect: true })
    expect(() => createLocks({ redis: client, replicas: { count: 0, timeout: 10 } })).toThrow(InvalidArgumentError)
    expect(() => createLocks({ redis: client, replicas: { count: 1, timeout: -1 } })).toThrow(/replicas.timeout/)
    expect(() => createLocks({ redis: [client], replicas: REPLICAS })).toThrow(/quorum mode/)
    client.disconnect()
  })

  describe.each(adapters)('with $name', ({ connect }) => {
    let pair: ReplicatedPair
    let client: Awaited<ReturnType<Connect>>
    let locks: Locks
    const cleanup: (() => Promise<void>)[] = []

    beforeAll(async () => {
      pair = await startReplicated()
      client = await connect(pair.primary.url)
      locks = createLocks({ redis: client.raw, replicas: REPLICAS, ttl: 2_000 })
    })
    afterAll(async () => {
      await locks?.close()
      await client?.close()
      await pair?.stop()
    })
    afterEach(async () => {
      pair.replica.resume()
      for (const step of cleanup.splice(0)) await step()
    })

    it('grants a lock only once the replica has it, with its fence', async () => {
      const lease = await locks.acquire('r:basic')
      // WAIT returned 1 before the lease existed: the replica already has both keys.
      expect(tokenIn(await pair.replica.cli('GET', 'fencelock:{r:basic}:L'))).toBe(lease.token)
      expect(Number(await pair.replica.cli('GET', 'fencelock:{r:basic}:F'))).toBe(lease.fence)
      await lease.release()
    })

    it('5. failover before the lock replicated: fails with ReplicationError and rolls the lock back when the replica does not acknowledge', async () => {
      pair.replica.pause()
      const err = await locks.tryAcquire('r:paused').catch((e: unknown) => e)
      expect(err).toBeInstanceOf(ReplicationError)
      // Acknowledged 0 is WAIT's own reply, which it gives only once its timeout ran out: the
      // attempt waited for the replica as long as asked, and was not cut short.
      expect(err).toMatchObject({ code: 'REPLICATION_FAILED', acknowledged: 0, required: 1, resource: 'r:paused' })
      expect(await pair.primary.cli('EXISTS', 'fencelock:{r:paused}:L')).toBe('0')
      // Waiting retries within its budget, then fails: with the same typed error, or (if the
      // deadline cut the last attempt short while its WAIT was still blocking) a RedisError.
      const lastErr = await locks.acquire('r:paused', { wait: 700 }).catch((e: unknown) => e)
      expect(lastErr instanceof ReplicationError || (lastErr instanceof RedisError && /No reply/.test(String(lastErr.cause)))).toBe(true)
      // (An attempt may still be in flight behind its WAIT: let it fail and roll back first. The
      // connection runs commands in order: once a PING sent now answers, that WAIT returned.)
      await (client.raw as unknown as { ping(): Promise<unknown> }).ping()
      await until('the last attempt was rolled back', async () => (await pair.primary.cli('EXISTS', 'fencelock:{r:paused}:L')) === '0')
      expect(await locks.tryAcquire('r:paused').catch((e: unknown) => e)).toBeInstanceOf(ReplicationError)
      pair.replica.resume()
      const lease = await locks.acquire('r:paused', { wait: 2_000 })
      await lease.release()
    })

    it('acquisitions of one turn share one script call and one WAIT; with the replica paused, each of them fails with ReplicationError and is rolled back', async () => {
      const names = Array.from({ length: 8 }, (_, i) => `r:batch:${i}`)
      await pair.primary.cli('CONFIG', 'RESETSTAT')
      // Leases that outlive the checks below (each a redis-cli process: seconds on a loaded machine).
      const leases = await Promise.all(names.map((name) => locks.tryAcquire(name, { ttl: 30_000 })))
      const [evalsha, evals, waits] = await callsOfAll(pair.primary, ['evalsha', 'eval', 'wait'])
      expect([evalsha! + evals!, waits]).toEqual([1, 1])
      // Each lease is its own, on the replica with its own fence, as the WAIT said.
      expect(new Set(leases.map((l) => l!.fence)).size).toBe(names.length)
      const onReplica = await pair.replica.cli('MGET', ...names.map((name) => `fencelock:{${name}}:L`))
      expect(onReplica.split('\n').map(tokenIn)).toEqual(leases.map((l) => l!.token))
      await Promise.all(leases.map((l) => l!.release()))

      pair.replica.pause()
      const failed = await Promise.all(names.map((name) => locks.tryAcquire(name).catch((e: unknown) => e)))
      for (const [i, err] of failed.entries()) {
        expect(err).toBeInstanceOf(ReplicationError)
        expect(err).toMatchObject({ acknowledged: 0, required: 1, resource: names[i] })
        expect(await pair.primary.cli('EXISTS', `fencelock:{${names[i]}}:L`)).toBe('0')
      }
    })

    it('an extension the replica did not acknowledge fails and keeps the old deadline', async () => {
      const lease = await locks.acquire('r:extend')
      const deadline = lease.deadline
      pair.replica.pause()
      const err = await lease.extend(2_000).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(RedisError)
      expect((err as RedisError).cause).toBeInstanceOf(ReplicationError)
      expect(lease.deadline).toBe(deadline)
      expect(lease.held).toBe(true)
      pair.replica.resume()
      await lease.extend(2_000)
      expect(lease.deadline).toBeGreaterThan(deadline)
      await lease.release()
    })

    it('resends WAIT after a NOSCRIPT retry (the first WAIT ran before the script)', async () => {
      await pair.primary.cli('SCRIPT', 'FLUSH')
      pair.replica.pause()
      // Earlier writes of this connection were all acknowledged, so a WAIT that ran before the
      // EVAL would return 1 at once and let an unreplicated lock through.
      const err = await locks.tryAcquire('r:noscript').catch((e: unknown) => e)
      expect(err).toBeInstanceOf(ReplicationError)
      expect(await pair.primary.cli('EXISTS', 'fencelock:{r:noscript}:L')).toBe('0')
    })

    it('after the primary is killed and the replica promoted, the lock is still held there', async () => {
      const own = await startReplicated()
      const c = await connect(own.primary.url)
      // A ttl that outlasts the kill, the promotion and the new connection on a loaded machine (with
      // 1 s the promoted node sometimes expired the lock before it was asked).
      const set = createLocks({ redis: c.raw, replicas: REPLICAS, ttl: 4_000 })
      cleanup.push(async () => {
        await set.close()
        await c.close()
        await own.stop()
      })
      const lease = await set.acquire('r:failover')
      await own.primary.kill9()
      await own.replica.cli('REPLICAOF', 'NO', 'ONE')
      const promoted = await connect(own.replica.url)
      const after = createLocks({ redis: promoted.raw })
      cleanup.unshift(async () => {
        await after.close()
        await promoted.close()
      })
      const info = await after.inspect('r:failover')
      expect(info).toMatchObject({ held: true, token: lease.token, fence: lease.fence })
      expect(await after.tryAcquire('r:failover')).toBeNull()
      // Once the lease's ttl is over, the next holder gets a larger fence from the promoted node.
      const next = await after.acquire('r:failover', { wait: 6_000 })
      expect(next.fence).toBeGreaterThan(lease.fence)
      await next.release()
    })
  })
})
