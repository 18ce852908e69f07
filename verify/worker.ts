// One worker process: moves money between accounts under the lock, using only fencelock's public
// API, through the fault proxies. Every step is printed as one JSON line on stdout; the
// orchestrator timestamps nothing itself, the worker's clock (shared monotonic) does.
import type { Lease, LockLostError } from '../src/index.js'
import { clockOrigin, now } from './history.js'
import { bank, bankStep, codeOf, setLastWriter, sleep, workerKit } from './worker-kit.js'

const kit = workerKit()
const { config, worker, random, emit, op, locks } = kit
const { db, table, ledger } = bank(config)

interface Transfer {
  resource: string
  from: number
  to: number
  amount: number
}

/** Two distinct accounts of one bank, and an amount. */
function pickTransfer(): Transfer {
  const bank = random.pick(config.resources)
  const from = random.pick(bank.accounts)
  let to = random.pick(bank.accounts)
  while (to === from) to = random.pick(bank.accounts)
  return { resource: bank.name, from, to, amount: random.int(1, 50) }
}

/** The bank's lock, its abort recorded as a `lost` event; undefined (after a short pause) when it was not granted. */
async function acquireBank(resource: string): Promise<Lease | undefined> {
  op('invoke', 'acquire', resource)
  let lease: Lease
  try {
    lease = await locks.acquire(resource, { ttl: config.ttl, wait: config.wait })
  } catch (err) {
    op('fail', 'acquire', resource, { error: codeOf(err) })
    await sleep(random.int(5, 50))
    return undefined
  }
  const fence = lease.fence
  op('ok', 'acquire', resource, { fence, value: { deadline: clockOrigin + lease.deadline } })
  const onAbort = () => {
    const reason = (lease.signal.reason as LockLostError | undefined)?.reason ?? 'unknown'
    emit({ kind: 'lost', worker, pid: process.pid, resource, fence, reason, time: now() })
  }
  if (lease.signal.aborted) onAbort()
  else lease.signal.addEventListener('abort', onAbort, { once: true })
  return lease
}

/**
 * Fence the read too: a write-only guard lets a stale holder write balances it read before a
 * newer holder's write, as long as it writes first. Claiming the rows with the fence before
 * reading makes every later write of an older holder hit a larger fence and fail.
 */
async function claimRows(t: Transfer, fence: number): Promise<boolean> {
  op('invoke', 'claim', t.resource, { fence })
  const claimed = await db.query(`UPDATE ${table} SET fence = $1 WHERE id = ANY($2::int[]) AND fence <= $1`, [fence, [t.from, t.to]])
  if (claimed.rowCount !== 2) {
    op('fail', 'claim', t.resource, { fence, error: 'stale', value: { rows: claimed.rowCount } })
    return false
  }
  op('ok', 'claim', t.resource, { fence })
  return true
}

async function readBalances(t: Transfer, fence: number): Promise<{ from: number; to: number }> {
  op('invoke', 'read', t.resource, { fence })
  const read = await db.query<{ id: number; balance: string }>(`SELECT id, balance FROM ${table} WHERE id = ANY($1::int[])`, [[t.from, t.to]])
  const balance = new Map(read.rows.map((row) => [row.id, Number(row.balance)]))
  const before = { from: balance.get(t.from) ?? 0, to: balance.get(t.to) ?? 0 }
  op('ok', 'read', t.resource, { fence, value: { [t.from]: before.from, [t.to]: before.to } })
  return before
}

/** Both balances written (guarded by the fence when fencing is on) and the ledger appended, in one transaction; true if it committed. */
async function writeBalances(t: Transfer, fence: number, before: { from: number; to: number }, inTxn: boolean): Promise<boolean> {
  const { resource, from, to, amount } = t
  const write = { from, to, amount, balances: { [from]: before.from - amount, [to]: before.to + amount } }
  op('invoke', 'write', resource, { fence, value: write })
  try {
    if (!inTxn) await db.query('BEGIN')
    const guard = config.fencing ? ' AND fence <= $2' : ''
    const update = `UPDATE ${table} SET balance = $1, fence = $2 WHERE id = $3${guard}`
    const a = await db.query(update, [before.from - amount, fence, from])
    const b = await db.query(update, [before.to + amount, fence, to])
    if (a.rowCount === 1 && b.rowCount === 1) {
      await db.query(`INSERT INTO ${ledger} (account, fence, worker, balance) VALUES ($1, $2, $3, $4), ($5, $2, $3, $6)`, [
        from,
        fence,
        worker,
        before.from - amount,
        to,
        before.to + amount,
      ])
      await db.query('COMMIT')
      op('ok', 'write', resource, { fence, value: write })
      return true
    }
    await db.query('ROLLBACK')
    op('fail', 'write', resource, { fence, error: 'stale', value: write })
  } catch (err) {
    await db.query('ROLLBACK').catch(() => {})
    op('info', 'write', resource, { fence, error: codeOf(err), value: write })
  }
  return false
}

async function releaseBank(lease: Lease, resource: string): Promise<void> {
  const fence = lease.fence
  op('invoke', 'release', resource, { fence })
  try {
    const released = await lease.release()
    op('ok', 'release', resource, { fence, value: { released } })
  } catch (err) {
    op('info', 'release', resource, { fence, error: codeOf(err) })
  }
}

async function transfer(): Promise<void> {
  const t = pickTransfer()
  const lease = await acquireBank(t.resource)
  if (!lease) return
  const fence = lease.fence
  try {
    if (config.fencing && config.guard === 'claim' && !(await claimRows(t, fence))) return
    // 'txn': the whole read-modify-write in one transaction, as the README shows the guard.
    const inTxn = config.fencing && config.guard === 'txn'
    if (inTxn) await db.query('BEGIN')
    const before = await readBalances(t, fence)
    await sleep(random.int(config.hold[0], config.hold[1]))
    // The Redis-side resource: the bank's last-writer record, guarded by fencedSet.
    if (await writeBalances(t, fence, before, inTxn)) await setLastWriter(kit, t.resource, fence)
  } finally {
    await releaseBank(lease, t.resource)
  }
}

kit.runUntilTerm(bankStep(kit, db, transfer), { start: async () => void (await db.connect()), end: async () => void (await db.end().catch(() => {})) })
