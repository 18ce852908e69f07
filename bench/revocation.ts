// V: revocation latency. A holder's instance holds a lock; an operator's instance (another client)
// revokes it; measured from the operator's `revoke` call to the holder's `lease.signal` aborting
// (reason 'revoked'): the release by token, the notice's PUBLISH, its delivery to the holder's
// subscriber and the abort. One Redis, and a quorum of 3 (the holder hears the first node).
import { Redis } from 'ioredis'
import type { Config } from './bench-config.js'
import { fencelock } from './library.js'
import type { Server } from './redis.js'
import { fmt, percentile, sleep } from './stats.js'

const log = (line: string) => process.stderr.write(`${line}\n`)

/** The promise's bound: a revoked holder hears it within 50 ms at p99 on this machine. */
export const REVOKE_P99_TARGET_MS = 50

/** A quorum node counts once it has been up this long (the quorum instance's maxTtl). */
const V_QUORUM_MAX_TTL = 2_000

export interface RevocationRow {
  topology: 'one Redis' | 'quorum of 3'
  revocations: number
  /** Revocations whose holder had not heard within 5 s (each then counted as 5,000 ms). */
  unheard: number
  p50: number
  p99: number
  max: number
  /** Every abort's reason was 'revoked'. */
  reasonsRevoked: boolean
}

/** `n` revocations, one at a time, each of a fresh lock held by `holder`, revoked through `operator`. */
async function revokeInTurn(
  holder: ReturnType<typeof fencelock.createLocks>,
  operator: ReturnType<typeof fencelock.createLocks>,
  n: number,
  listening: () => Promise<boolean>,
): Promise<Omit<RevocationRow, 'topology'>> {
  const times: number[] = []
  let unheard = 0
  let reasonsRevoked = true
  for (let i = 0; i < n; i++) {
    const lease = await holder.acquire(`v:${i}`, { ttl: V_QUORUM_MAX_TTL })
    if (i === 0) for (let w = 0; w < 500 && !(await listening()); w++) await sleep(10)
    const heard = new Promise<number>((resolve) => lease.signal.addEventListener('abort', () => resolve(performance.now()), { once: true }))
    const started = performance.now()
    await operator.revoke(`v:${i}`, lease.token)
    const at = await Promise.race([heard, sleep(5_000).then(() => undefined)])
    if (at === undefined) unheard++
    times.push(at === undefined ? 5_000 : at - started)
    const reason = (lease.signal.reason as { reason?: string } | undefined)?.reason
    if (reason !== 'revoked') reasonsRevoked = false
  }
  return { revocations: n, unheard, p50: percentile(times, 50), p99: percentile(times, 99), max: Math.max(...times), reasonsRevoked }
}

const numsub = async (client: Redis, channel: string) => Number(((await client.call('PUBSUB', 'NUMSUB', channel)) as unknown[])[1])

/** V on one Redis and on a quorum of three fresh nodes (`start` starts one). */
export async function revocationLatency(main: Server, start: () => Promise<Server>, cfg: Config): Promise<RevocationRow[]> {
  const n = cfg.quick ? 100 : 1_000
  const rows: RevocationRow[] = []
  const prefix = 'v:'
  const channel = `${prefix}revoked`
  {
    const a = new Redis(main.url)
    const b = new Redis(main.url)
    const holder = fencelock.createLocks({ redis: a, prefix })
    const operator = fencelock.createLocks({ redis: b, prefix })
    try {
      rows.push({ topology: 'one Redis', ...(await revokeInTurn(holder, operator, n, async () => (await numsub(b, channel)) >= 1)) })
    } finally {
      await holder.close()
      await operator.close()
      a.disconnect()
      b.disconnect()
    }
  }
  const nodes = [await start(), await start(), await start()]
  await sleep(V_QUORUM_MAX_TTL + 200) // a node counts once it has been up for maxTtl
  const holderClients = nodes.map((s) => new Redis(s.url))
  const operatorClients = nodes.map((s) => new Redis(s.url))
  const options = { prefix, maxTtl: V_QUORUM_MAX_TTL, ttl: V_QUORUM_MAX_TTL }
  const holder = fencelock.createLocks({ redis: holderClients, ...options })
  const operator = fencelock.createLocks({ redis: operatorClients, ...options })
  try {
    const listening = async () => (await Promise.all(operatorClients.map((c) => numsub(c, channel)))).every((count) => count >= 1)
    rows.push({ topology: 'quorum of 3', ...(await revokeInTurn(holder, operator, n, listening)) })
  } finally {
    await holder.close()
    await operator.close()
    for (const c of [...holderClients, ...operatorClients]) c.disconnect()
  }
  for (const r of rows)
    log(`  V ${r.topology}: ${r.revocations} revocations, heard p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms, max ${fmt(r.max)} ms, unheard ${r.unheard}`)
  return rows
}
