// The fenced-SQL pattern from the README, on a real PostgreSQL: a row remembers the highest fence
// that wrote it, and an UPDATE carrying an older fence changes nothing.
import pg from 'pg'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type Lease, type Locks } from '../../src/index.js'
import { pgConfig, requirePgOrSkip } from '../../harness/postgres.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'

const ready = requireRedisOrSkip() && (await requirePgOrSkip())
const table = `fenced_accounts_${process.pid}`

/**
 * The pattern, as documented: claim the row for this fence and read it in one statement, then
 * write. Returns false when a newer fence has claimed the row: nothing was written.
 */
async function fencedWithdraw(db: pg.Client, id: string, amount: number, lease: Lease): Promise<boolean> {
  await db.query('BEGIN')
  try {
    const claim = await db.query<{ balance: string }>(`UPDATE ${table} SET fence = $2 WHERE id = $1 AND fence <= $2 RETURNING balance`, [id, lease.fence])
    if (claim.rowCount !== 1) {
      await db.query('ROLLBACK')
      return false
    }
    await db.query(`UPDATE ${table} SET balance = $2 WHERE id = $1`, [id, Number(claim.rows[0]!.balance) - amount])
    await db.query('COMMIT')
    return true
  } catch (err) {
    await db.query('ROLLBACK')
    throw err
  }
}

const balanceOf = async (db: pg.Client, id: string) => Number((await db.query(`SELECT balance FROM ${table} WHERE id = $1`, [id])).rows[0].balance)

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

  it('a guard on the write alone loses an update in a read-modify-write; claiming before reading does not', async () => {
    const other = new pg.Client(pgConfig())
    await other.connect()
    try {
      const older = await locks.acquire('acct', { ttl: 100 })
      await new Promise((r) => older.signal.addEventListener('abort', r))
      const newer = await locks.acquire('acct', { wait: 1_000 })
      await db.query(`UPDATE ${table} SET balance = 300, fence = 0 WHERE id = 'acct'`)

      // Write-only guard: both read 300 before either writes; both writes pass the fence check.
      const readA = await balanceOf(db, 'acct')
      const readB = await balanceOf(other, 'acct')
      const guarded = `UPDATE ${table} SET balance = $2, fence = $3 WHERE id = $1 AND fence <= $3`
      expect((await db.query(guarded, ['acct', readA - 10, older.fence])).rowCount).toBe(1)
      expect((await other.query(guarded, ['acct', readB - 10, newer.fence])).rowCount).toBe(1)
      expect(await balanceOf(db, 'acct')).toBe(290) // one withdrawal lost

      // Claim first, same interleaving: the older holder claims and reads; the newer one's claim
      // waits for that transaction, then reads its result. Nothing is lost.
      await db.query(`UPDATE ${table} SET balance = 300, fence = 0 WHERE id = 'acct'`)
      await db.query('BEGIN')
      const claimA = await db.query(`UPDATE ${table} SET fence = $2 WHERE id = $1 AND fence <= $2 RETURNING balance`, ['acct', older.fence])
      const b = fencedWithdraw(other, 'acct', 10, newer)
      await db.query(`UPDATE ${table} SET balance = $2 WHERE id = $1`, ['acct', Number(claimA.rows[0].balance) - 10])
      await db.query('COMMIT')
      expect(await b).toBe(true)
      expect(await balanceOf(db, 'acct')).toBe(280)
      // And once the newer fence has claimed the row, the older holder is refused outright.
      expect(await fencedWithdraw(db, 'acct', 10, older)).toBe(false)
      expect(await balanceOf(db, 'acct')).toBe(280)
      await newer.release()
    } finally {
      await other.end()
    }
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
