// The probe after every worker was killed with -9: a fresh client must get each resource (each
// permit, for the semaphore) within the liveness bound, whatever the dead left behind.
import type { Redis } from 'ioredis'
import { createLocks } from '../src/index.js'
import type { HistoryWriter } from './history.js'
import type { ProbeResult } from './run-types.js'

export interface ProbeOptions {
  clients: Redis[]
  quorum: boolean
  ttl: number
  maxTtl: number
  /** Semaphore mode: the workers' limit. */
  semaphore: { workerLimit: number } | undefined
  /** Election mode: the probe campaigns (and resigns) instead of acquiring. */
  election: boolean
  resources: string[]
  history: HistoryWriter
  now: () => number
}

async function probeOne(o: ProbeOptions, locks: ReturnType<typeof createLocks>, name: string, held: { release(): Promise<boolean> }[]): Promise<ProbeResult> {
  const { history, now, semaphore } = o
  const t0 = now()
  history.add({ kind: 'op', type: 'invoke', f: 'probe', worker: 'probe', pid: process.pid, resource: name, time: t0 })
  try {
    const wait = o.ttl * 3 + 5_000
    const lease = semaphore
      ? await locks.semaphore(name, { limit: semaphore.workerLimit }).acquire({ wait })
      : o.election
        ? await locks.election(name).campaign('probe', { wait })
        : await locks.acquire(name, { wait })
    const waited = now() - t0
    history.add({ kind: 'op', type: 'ok', f: 'probe', worker: 'probe', pid: process.pid, resource: name, fence: lease.fence, time: now(), value: { waited } })
    if (semaphore) held.push(lease)
    else await lease.release().catch(() => false)
    return { resource: name, ok: true, waited }
  } catch (err) {
    const error = `${(err as { code?: string }).code ?? 'Error'}: ${(err as Error).message}`
    history.add({ kind: 'op', type: 'fail', f: 'probe', worker: 'probe', pid: process.pid, resource: name, time: now(), error })
    return { resource: name, ok: false, waited: now() - t0, error }
  }
}

export async function probe(o: ProbeOptions): Promise<ProbeResult[]> {
  for (const client of o.clients) client.on('error', () => {})
  const locks = o.quorum
    ? createLocks({ redis: o.clients, prefix: 'verify:', ttl: o.ttl, maxTtl: o.maxTtl })
    : createLocks({ redis: o.clients[0]!, prefix: 'verify:', ttl: o.ttl })
  // Semaphore mode: every permit at once (with the workers' limit: another would be refused while
  // their permits are still held), each probe waiting for one and keeping it until all are taken.
  const held: { release(): Promise<boolean> }[] = []
  const targets = o.semaphore ? Array.from({ length: o.semaphore.workerLimit }, () => o.resources[0]!) : o.resources
  const probes = await Promise.all(targets.map((name) => probeOne(o, locks, name, held)))
  await Promise.all(held.map((lease) => lease.release().catch(() => false)))
  await locks.close()
  return probes
}
