// One worker process: moves money between accounts under the lock, using only fencelock's public
// API, through the fault proxies. Every step is printed as one JSON line on stdout; the
// orchestrator timestamps nothing itself, the worker's clock (shared monotonic) does.
import { fencedSet, type Lease, type LockLostError } from '../src/index.js'
import { now } from './history.js'
import { bank, bankStep, codeOf, sleep, workerKit } from './worker-kit.js'

const kit = workerKit()
const { config, worker, random, emit, op, stateClient, locks } = kit
const { db, table, ledger } = bank(config)

async function transfer(): Promise<void> {
  const bank = random.pick(config.resources)
  const from = random.pick(bank.accounts)
  let to = random.pick(bank.accounts)
  while (to === from) to = random.pick(bank.accounts)
  const amount = random.int(1, 50)
  const resource = bank.name

  op('invoke', 'acquire', resource)
  let lease: Lease
  try {
    lease = await locks.acquire(resource, { ttl: config.ttl, wait: config.wait })
  } catch (err) {
    op('fail', 'acquire', resource, { error: codeOf(err) })
    await sleep(random.int(5, 50))
    return
  }
  const fence = lease.fence
  op('ok', 'acquire', resource, { fence, value: { deadline: performance.timeOrigin + lease.deadline } })
  const onAbort = () => {
    const reason = (lease.signal.reason as LockLostError | undefined)?.reason ?? 'unknown'
    emit({ kind: 'lost', worker, pid: process.pid, resource, fence, reason, time: now() })
  }
  if (lease.signal.aborted) onAbort()
  else lease.signal.addEventListener('abort', onAbort, { once: true })

  try {
    if (config.fencing && config.guard === 'claim') {
      // Fence the read too: a write-only guard lets a stale holder write balances it read before a
      // newer holder's write, as long as it writes first. Claiming the rows with the fence before
      // reading makes every later write of an older holder hit a larger fence and fail.
      op('invoke', 'claim', resource, { fence })
      const claimed = await db.query(`UPDATE ${table} SET fence = $1 WHERE id = ANY($2::int[]) AND fence <= $1`, [fence, [from, to]])
      if (claimed.rowCount !== 2) {
        op('fail', 'claim', resource, { fence, error: 'stale', value: { rows: claimed.rowCount } })
        return
      }
      op('ok', 'claim', resource, { fence })
    }

    // 'txn': the whole read-modify-write in one transaction, as the README shows the guard.
    const inTxn = config.fencing && config.guard === 'txn'
    if (inTxn) await db.query('BEGIN')
    op('invoke', 'read', resource, { fence })
    const read = await db.query<{ id: number; balance: string }>(`SELECT id, balance FROM ${table} WHERE id = ANY($1::int[])`, [[from, to]])
    const balance = new Map(read.rows.map((row) => [row.id, Number(row.balance)]))
    const before = { from: balance.get(from) ?? 0, to: balance.get(to) ?? 0 }
    op('ok', 'read', resource, { fence, value: { [from]: before.from, [to]: before.to } })

    await sleep(random.int(config.hold[0], config.hold[1]))

    const write = { from, to, amount, balances: { [from]: before.from - amount, [to]: before.to + amount } }
    op('invoke', 'write', resource, { fence, value: write })
    let committed = false
    try {
      if (!inTxn) await db.query('BEGIN')
      const guard = config.fencing ? ' AND fence <= $2' : ''
      const update = `UPDATE ${table} SET balance = $1, fence = $2 WHERE id = $3${guard}`
      const a = await db.query(update, [before.from - amount, fence, from])
      const b = await db.query(update, [before.to + amount, fence, to])
      if (a.rowCount === 1 && b.rowCount === 1) {
        await db.query(`INSERT INTO ${ledger} (account, fence, worker, balance) VALUES ($1, $2, $3, $4), ($5, $2, $3, $6)`, [
          from, fence, worker, before.from - amount, to, before.to + amount,
        ])
        await db.query('COMMIT')
        committed = true
        op('ok', 'write', resource, { fence, value: write })
      } else {
        await db.query('ROLLBACK')
        op('fail', 'write', resource, { fence, error: 'stale', value: write })
      }
    } catch (err) {
      await db.query('ROLLBACK').catch(() => {})
      op('info', 'write', resource, { fence, error: codeOf(err), value: write })
    }

    if (committed) {
      // The Redis-side resource: the bank's last-writer record, guarded by fencedSet.
      const key = `verify:{${resource}}:last`
      const value = JSON.stringify({ worker, fence })
      op('invoke', 'fset', resource, { fence })
      try {
        const accepted = config.fencing ? await fencedSet(stateClient, key, value, fence) : (await stateClient.set(key, value)) === 'OK'
        op(accepted ? 'ok' : 'fail', 'fset', resource, { fence, ...(accepted ? {} : { error: 'stale' }) })
      } catch (err) {
        op('info', 'fset', resource, { fence, error: codeOf(err) })
      }
    }
  } finally {
    op('invoke', 'release', resource, { fence })
    try {
      const released = await lease.release()
      op('ok', 'release', resource, { fence, value: { released } })
    } catch (err) {
      op('info', 'release', resource, { fence, error: codeOf(err) })
    }
  }
}

kit.runUntilTerm(bankStep(kit, db, transfer), { start: async () => void (await db.connect()), end: async () => void (await db.end().catch(() => {})) })
