// The fenced-SQL pattern from the README, on a real PostgreSQL: a row remembers the highest fence
// that wrote it, and an UPDATE carrying an older fence changes nothing.
import pg from 'pg'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type Lease, type Locks } from '../src/index.js'
import { pgConfig, requirePgOrSkip } from './harness/postgres.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from './support/redis-server.js'

const ready = requireRedisOrSkip() && (await requirePgOrSkip())
const table = `fenced_accounts_${process.pid}`

/** The pattern, as documented: returns false when the fence is stale and nothing was written. */
async function fencedWithdraw(db: pg.Client, id: string, amount: number, lease: Lease): Promise<boolean> {
  await db.query('BEGIN')
  try {
    const { rows } = await db.query<{ balance: string }>(`SELECT balance FROM ${table} WHERE id = $1`, [id])
    const balance = Number(rows[0]!.balance)
    const result = await db.query(`UPDATE ${table} SET balance = $2, fence = $3 WHERE id = $1 AND fence <= $3`, [
      id,
      balance - amount,
      lease.fence,
    ])
    if (result.rowCount !== 1) {
      await db.query('ROLLBACK')
      return false
    }
    await db.query('COMMIT')
    return true
  } catch (err) {
    await db.query('ROLLBACK')
    throw err
  }
}

describe.skipIf(!ready)('fenced SQL writes on PostgreSQL', () => {
  let server: RedisProcess
  let redis: Redis
  let locks: Locks
  let db: pg.Client

  beforeAll(async () => {
    server = await startRedis()
    redis = new Redis(server.port)
    locks = createLocks({ redis })
    db = new pg.Client(pgConfig())
    await db.connect()
    await db.query(`DROP TABLE IF EXISTS ${table}`)
    await db.query(`CREATE TABLE ${table} (id text PRIMARY KEY, balance bigint NOT NULL, fence bigint NOT NULL DEFAULT 0)`)
    await db.query(`INSERT INTO ${table} (id, balance) VALUES ('acct', 1000)`)
  })
  afterAll(async () => {
    await db?.query(`DROP TABLE IF EXISTS ${table}`).catch(() => {})
    await db?.end()
    await locks?.close()
    redis?.disconnect()
    await server?.stop()
  })

  it('refuses a write from a holder whose lease expired after a newer holder wrote', async () => {
    const stale = await locks.acquire('acct', { ttl: 100 })
    await new Promise((r) => stale.signal.addEventListener('abort', r))
    const fresh = await locks.acquire('acct', { wait: 1_000 })
    expect(fresh.fence).toBeGreaterThan(stale.fence)
    expect(await fencedWithdraw(db, 'acct', 100, fresh)).toBe(true)
    // The paused holder wakes up and writes anyway: the database refuses it.
    expect(await fencedWithdraw(db, 'acct', 100, stale)).toBe(false)
    const { rows } = await db.query(`SELECT balance, fence FROM ${table} WHERE id = 'acct'`)
    expect(Number(rows[0].balance)).toBe(900)
    expect(Number(rows[0].fence)).toBe(fresh.fence)
    await fresh.release()
  })

  it('fences fit a bigint column and keep increasing', async () => {
    const first = await locks.acquire('acct')
    await first.release()
    const second = await locks.acquire('acct')
    expect(await fencedWithdraw(db, 'acct', 1, second)).toBe(true)
    expect(await fencedWithdraw(db, 'acct', 1, first)).toBe(false)
    const { rows } = await db.query(`SELECT fence::text AS fence FROM ${table} WHERE id = 'acct'`)
    expect(rows[0].fence).toBe(String(second.fence))
    await second.release()
  })
})
