// Finding 3 of `npm run verify` (docs/evidence/verify.md): the fenced-SQL guard as the README shows it
// (`UPDATE … WHERE id = $1 AND fence <= $3` inside the transaction that reads and writes) does not
// stop a lost update in a read-modify-write. A holder that stalls past its deadline (GC, SIGSTOP;
// here simply a sleep) and wakes up after the next holder has read, but before it has written, is
// accepted: its fence is still the highest the rows have seen. Then the next holder writes values
// computed from its older read, with a larger fence, and is accepted too.
//   npx tsx verify/repro/sql-write-only-guard.ts   (exit 1 while money is lost; needs PostgreSQL)
import pg from 'pg'
import { Redis } from 'ioredis'
import { createLocks } from '../../src/index.js'
import { startRedis } from '../../harness/redis-server.js'
import { findPg } from '../pg-target.js'

const found = await findPg()
if (!('target' in found)) throw new Error(found.error)
const node = await startRedis()
const redis = new Redis({ port: node.port })
const locks = createLocks({ redis, ttl: 300 })
const a = new pg.Client(found.target)
const b = new pg.Client(found.target)
await a.connect()
await b.connect()
const table = `fencelock_repro_${process.pid}`
await a.query(`CREATE TABLE ${table} (id int PRIMARY KEY, balance bigint NOT NULL, fence bigint NOT NULL DEFAULT 0)`)
await a.query(`INSERT INTO ${table} (id, balance) VALUES (1, 100), (2, 100), (3, 100)`)
const guarded = `UPDATE ${table} SET balance = $2, fence = $3 WHERE id = $1 AND fence <= $3`
const balances = async (db: pg.Client, ids: number[]) =>
  new Map(
    (await db.query<{ id: number; balance: string }>(`SELECT id, balance FROM ${table} WHERE id = ANY($1::int[])`, [ids])).rows.map((r) => [
      r.id,
      Number(r.balance),
    ]),
  )

try {
  // A: move 10 from account 1 to 2. It reads, then stalls past its lease's deadline.
  const leaseA = await locks.acquire('bank')
  await a.query('BEGIN')
  const readA = await balances(a, [1, 2])
  await new Promise((resolve) => setTimeout(resolve, 400))
  console.log(`A's lease lost: ${leaseA.signal.aborted} (A does not check it, as a stalled process would not)`)

  // B: move 10 from account 2 to 3. It acquires and reads; A wakes up before B writes.
  const leaseB = await locks.acquire('bank')
  await b.query('BEGIN')
  const readB = await balances(b, [2, 3])

  const a1 = await a.query(guarded, [1, readA.get(1)! - 10, leaseA.fence])
  const a2 = await a.query(guarded, [2, readA.get(2)! + 10, leaseA.fence])
  await a.query('COMMIT')
  const b2 = await b.query(guarded, [2, readB.get(2)! - 10, leaseB.fence])
  const b3 = await b.query(guarded, [3, readB.get(3)! + 10, leaseB.fence])
  await b.query('COMMIT')
  await leaseB.release()

  const total = [...(await balances(a, [1, 2, 3])).values()].reduce((x, y) => x + y, 0)
  console.log(`stale A (fence ${leaseA.fence}) writes accepted: ${a1.rowCount! + a2.rowCount!}/2; B (fence ${leaseB.fence}): ${b2.rowCount! + b3.rowCount!}/2`)
  console.log(`money: 300 before, ${total} after${total === 300 ? '' : ': a transfer was lost'}`)
  process.exitCode = total === 300 ? 0 : 1
} finally {
  await a.query('ROLLBACK').catch(() => {})
  await a.query(`DROP TABLE IF EXISTS ${table}`)
  await a.end()
  await b.end()
  await locks.close()
  redis.disconnect()
  await node.stop()
}
