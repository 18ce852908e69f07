// Loss heard early (issue: revocation and holder names, item 3): a holder learns, before its
// deadline, that its extensions are failing and how long the lease still has. `lease.onAtRisk` and
// `fencelock:at-risk` report each failed extension of a lease still held, once per failure, before
// the loss; a lease whose extensions succeed or that Redis refused (a loss, not a risk) reports none.
import { expect, it } from 'vitest'
import { createLocks, RedisError, type LeaseRisk } from '../../src/index.js'
import { describeRedis, perAdapter } from '../../harness/per-adapter.js'
import { record } from '../../harness/telemetry.js'
import { startFaultProxy } from '../../harness/fault-proxy.js'
import { closeQuietly, uniquePrefix, until } from '../../harness/util.js'

describeRedis('a lease at risk', (server) => {
  perAdapter(server, (t) => {
    it('each failed automatic extension is heard once, with the validity left, before the loss', async () => {
      const proxy = await startFaultProxy(server.redis)
      const client = await t.adapter.connect(proxy.url)
      const locks = createLocks({ redis: client.raw, prefix: uniquePrefix('at-risk') })
      const risks = record('fencelock:at-risk')
      try {
        const lease = await locks.acquire('r', { ttl: 3_000, autoExtend: true })
        const heard: LeaseRisk[] = []
        const order: string[] = []
        lease.onAtRisk((risk) => {
          heard.push(risk)
          order.push('at-risk')
        })
        lease.signal.addEventListener('abort', () => order.push('lost'))
        // Every connection through the proxy is reset from now on: the renewals fail or go unanswered.
        proxy.partition()
        await until('the lease is lost', () => lease.signal.aborted, { timeout: 10_000 })
        expect(heard.length).toBeGreaterThan(0)
        // Heard while there was time left to act: the first well before the deadline.
        expect(heard[0]!.remaining).toBeGreaterThan(0)
        expect(order.at(-1)).toBe('lost')
        expect(order.indexOf('lost')).toBe(order.length - 1)
        for (const risk of heard) {
          expect(risk.error).toBeInstanceOf(RedisError)
          expect(risk.remaining).toBeGreaterThanOrEqual(0)
          expect(risk.remaining).toBeLessThanOrEqual(3_000)
        }
        // Validity only runs down between failures.
        expect(heard.map((r) => r.remaining)).toEqual([...heard.map((r) => r.remaining)].sort((a, b) => b - a))
        expect(risks.events.filter((e) => e.token === lease.token)).toHaveLength(heard.length)
        expect(lease.signal.reason).toMatchObject({ reason: 'unreachable' })
      } finally {
        risks.stop()
        await closeQuietly([locks])
        await client.disconnect()
        await proxy.close()
      }
    })

    it('once per failed extension: two failed extends, two reports, each with the validity left', async () => {
      const client = await t.adapter.connect(server.url)
      const locks = createLocks({ redis: client.raw, prefix: uniquePrefix('at-risk-twice') })
      try {
        const lease = await locks.acquire('r', { ttl: 30_000 })
        const heard: LeaseRisk[] = []
        const stop = lease.onAtRisk((risk) => heard.push(risk))
        await client.disconnect()
        await expect(lease.extend()).rejects.toBeInstanceOf(RedisError)
        await expect(lease.extend()).rejects.toBeInstanceOf(RedisError)
        expect(heard).toHaveLength(2)
        expect(heard[1]!.remaining).toBeLessThanOrEqual(heard[0]!.remaining)
        expect(lease.held).toBe(true) // at risk, not lost: its deadline has not come
        stop()
        await expect(lease.extend()).rejects.toBeInstanceOf(RedisError)
        expect(heard).toHaveLength(2)
      } finally {
        await closeQuietly([locks])
      }
    })

    it('a refused extension is a loss, not a risk; a lease whose extensions succeed is never at risk', async () => {
      const risks = record('fencelock:at-risk')
      const extensions = record('fencelock:extend')
      try {
        const kept = await t.locks.acquire('kept', { ttl: 300, autoExtend: true })
        const taken = await t.locks.acquire('taken', { ttl: 30_000 })
        await t.other.release('taken', taken.token)
        await expect(taken.extend()).rejects.toMatchObject({ reason: 'refused' })
        await until('the kept lease was extended twice', () => extensions.events.filter((e) => e.token === kept.token && e.outcome === 'extended').length >= 2)
        await kept.release()
        expect(risks.events.filter((e) => e.token === kept.token || e.token === taken.token)).toEqual([])
      } finally {
        risks.stop()
        extensions.stop()
      }
    })
  })
})
