// Fences across a quorum, end to end: several processes take the same lock over 5 masters while
// nodes are killed with -9 and restarted empty; a separate Redis plays the protected resource and
// records every fence in the order it sees them. They must strictly increase.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { mature, requireRedisOrSkip, startRedis, type RedisProcess } from '../../../harness/redis-server.js'
import { until } from '../../../harness/until.js'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
const SRC = new URL('../../../src/index.ts', import.meta.url).href
const TARGET = 1_000
const WORKERS = 3
const MAX_TTL = 1_000
// A worker still running after this long is killed (and its test fails): a hang, not a slow run.
const WORKER_LIMIT_MS = 90_000
// Acquisitions the workers complete between two faults (each fault waits for them, not for a time).
const PROGRESS = 25

// Runs in each worker process (ESM, loaded through tsx). The protected resource keeps the highest
// fence it accepted; a fence at or below it is a rejection. A rejection while the lease is still
// valid after the write is a violation: either two holders at once, or a fence that went backwards.
const WORKER = `
const { createLocks } = await import(process.env.FENCELOCK_SRC)
const { Redis } = await import('ioredis')
const ports = JSON.parse(process.env.NODES)
const clients = ports.map((port) => {
  const c = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, retryStrategy: () => 50 })
  c.on('error', () => {})
  return c
})
const resource = new Redis({ host: '127.0.0.1', port: Number(process.env.RESOURCE) })
const locks = createLocks({ redis: clients, maxTtl: ${MAX_TTL}, ttl: ${MAX_TTL}, quorum: { nodeTimeout: 250 } })
const accept = "local prev = tonumber(redis.call('GET', KEYS[1]) or '0'); local f = tonumber(ARGV[1]); " +
  "if f > prev then redis.call('SET', KEYS[1], ARGV[1]) end; " +
  "redis.call('RPUSH', KEYS[3], ARGV[1]); return {f > prev and 1 or 0, redis.call('INCR', KEYS[2])}"
const stats = { acquired: 0, rejected: 0, violations: 0, errors: 0 }
for (;;) {
  let lease
  try {
    lease = await locks.acquire('fences', { wait: 5000 })
  } catch (err) {
    stats.errors++
    if (Number(await resource.get('total')) >= ${TARGET}) break
    continue
  }
  const [ok, total] = await resource.eval(accept, 3, 'highest', 'total', 'log', String(lease.fence))
  stats.acquired++
  if (ok !== 1) {
    stats.rejected++
    if (lease.held) stats.violations++
  }
  await lease.release().catch(() => {})
  if (total >= ${TARGET}) break
}
await locks.close()
for (const c of clients) c.disconnect()
resource.disconnect()
process.stdout.write(JSON.stringify(stats))
`

interface Stats {
  acquired: number
  rejected: number
  violations: number
  errors: number
}

function worker(nodes: RedisProcess[], resource: RedisProcess): Promise<Stats> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', WORKER], {
      cwd: ROOT,
      env: { ...process.env, FENCELOCK_SRC: SRC, NODES: JSON.stringify(nodes.map((n) => n.port)), RESOURCE: String(resource.port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (c: Buffer) => (out += c.toString()))
    child.stderr.on('data', (c: Buffer) => (err += c.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), WORKER_LIMIT_MS)
    child.on('exit', (code) => {
      clearTimeout(timer)
      if (code === 0) resolve(JSON.parse(out) as Stats)
      else reject(new Error(`worker exited with ${code}: ${err.slice(-2000)}`))
    })
  })
}

describe.skipIf(!requireRedisOrSkip())('fences across a quorum, several processes, nodes restarted empty', () => {
  it(`strictly increase over ${TARGET} acquisitions`, { timeout: 100_000 }, async () => {
    const nodes = await Promise.all(Array.from({ length: 5 }, () => startRedis()))
    const resource = await startRedis()
    try {
      await mature(nodes, MAX_TTL) // a new node counts once it has been up for maxTtl
      const running = Array.from({ length: WORKERS }, () => worker(nodes, resource))
      let finished = false
      const all = Promise.all(running).finally(() => (finished = true))
      // Until the workers took PROGRESS more locks (or finished): each fault lands mid-run.
      const progress = async (what: string) => {
        const from = Number(await resource.cli('GET', 'total'))
        await until(what, async () => finished || Number(await resource.cli('GET', 'total')) >= from + PROGRESS, { timeout: 30_000, every: 20 })
      }
      // Chaos: one node at a time is killed with -9, stays down while the others grant, and is
      // restarted empty, then left to warm up (until it counts again).
      let restarts = 0
      for (let i = 0; !finished; i = (i + 1) % nodes.length) {
        await progress('the workers took more locks')
        if (finished) break
        await nodes[i]!.kill9()
        await progress(`the workers took more locks while node ${i} was down`)
        await nodes[i]!.restart()
        restarts++
        await mature([nodes[i]!], MAX_TTL)
      }
      const stats = await all
      const fences = (await resource.cli('LRANGE', 'log', '0', '-1')).split('\n').map(Number)
      const total = stats.reduce((sum, s) => sum + s.acquired, 0)
      expect(total).toBeGreaterThanOrEqual(TARGET)
      expect(fences.length).toBe(total)
      expect(restarts).toBeGreaterThanOrEqual(2)
      for (const s of stats) expect(s.acquired).toBeGreaterThan(0)
      expect(stats.reduce((sum, s) => sum + s.violations, 0)).toBe(0)
      // Every fence the resource saw was larger than the one before it.
      let backwards = 0
      for (let i = 1; i < fences.length; i++) if (fences[i]! <= fences[i - 1]!) backwards++
      expect(backwards).toBe(stats.reduce((sum, s) => sum + s.rejected, 0))
      expect(backwards).toBe(0)
    } finally {
      await Promise.all([...nodes, resource].map((n) => n.stop()))
    }
  })
})
