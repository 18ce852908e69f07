// Redis servers for the benchmark (the test harness's spawner: free ports, no persistence, killed
// on exit) and the INFO counters the scenarios compare.
import { Redis } from 'ioredis'
import { startRedis, type RedisProcess } from '../harness/redis-server.js'

export interface Server {
  proc: RedisProcess
  url: string
  /** An admin connection for INFO and FLUSHALL; not counted as load. */
  admin: Redis
  stop(): Promise<void>
}

/**
 * `FENCELOCK_REDIS_ARGS` (e.g. `--io-threads 2`) are passed to every redis-server of the run, as
 * `FENCELOCK_REDIS_SERVER` picks its binary (`npm run bench:servers` sets both).
 */
export async function startServer(): Promise<Server> {
  const args = (process.env.FENCELOCK_REDIS_ARGS ?? '').split(/\s+/).filter(Boolean)
  const proc = await startRedis({ args })
  const admin = new Redis(proc.url, { lazyConnect: true })
  await admin.connect()
  return {
    proc,
    url: proc.url,
    admin,
    async stop() {
      await admin.quit().catch(() => admin.disconnect())
      await proc.stop()
    },
  }
}

export interface Counters {
  /** Commands executed, from INFO commandstats: includes redis.call()s inside scripts; INFO itself excluded. */
  commands: number
  byCommand: Record<string, number>
  /** used_cpu_user + used_cpu_sys of the server, ms. */
  cpuMs: number
}

export async function counters(server: Server): Promise<Counters> {
  const text = (await server.admin.info('all')) as string
  const byCommand: Record<string, number> = {}
  let commands = 0
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    const name = m[1] ?? ''
    const calls = Number(m[2])
    if (name === 'info' || name.startsWith('config') || name.startsWith('client') || name === 'flushall') continue
    byCommand[name] = calls
    commands += calls
  }
  const user = Number(/used_cpu_user:([\d.]+)/.exec(text)?.[1] ?? 0)
  const sys = Number(/used_cpu_sys:([\d.]+)/.exec(text)?.[1] ?? 0)
  return { commands, byCommand, cpuMs: (user + sys) * 1000 }
}

export function delta(after: Counters, before: Counters): Counters {
  const byCommand: Record<string, number> = {}
  for (const [name, calls] of Object.entries(after.byCommand)) {
    const d = calls - (before.byCommand[name] ?? 0)
    if (d > 0) byCommand[name] = d
  }
  return { commands: after.commands - before.commands, byCommand, cpuMs: after.cpuMs - before.cpuMs }
}

export async function redisVersion(server: Server): Promise<string> {
  const text = (await server.admin.info('server')) as string
  return /redis_version:(\S+)/.exec(text)?.[1] ?? '?'
}
