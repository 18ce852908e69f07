// One transfer worker process (`--primitive multi`): moves money between two accounts of the bank,
// each account a lock of its own, both locked at once with `acquireAll` (given in random order),
// using only fencelock's public API, through the fault proxies. Each account row is claimed with
// that account's fence before it is read (the README's pattern), and written back guarded by it.
// Every step is one JSON line on stdout, one event per account: the history then looks like the
// mutex mode's with one lease per account, which is what the checker compares.
import type { LockLostError, MultiLease } from '../src/index.js'
import type { BankResource } from './config.js'
import { clockOrigin, now } from './history.js'
import { bank, bankStep, codeOf, setLastWriter, sleep, workerKit } from './worker-kit.js'

const kit = workerKit()
const { config, worker, random, emit, op, locks } = kit
const { db, table, ledger } = bank(config)

/** Two distinct accounts, each its own lock, the amount, and the order the locks are asked for. */
interface Transfer {
  from: BankResource
  to: BankResource
  amount: number
  pair: BankResource[]
  asked: string[]
}

const id = (r: BankResource) => r.accounts[0]!

function pickTransfer(): Transfer {
  const from = random.pick(config.resources)
  let to: BankResource = random.pick(config.resources)
  while (to === from) to = random.pick(config.resources)
  const amount = random.int(1, 50)
  // Asked for in random order: [a, b] and [b, a] both occur.
  const asked = random.next() < 0.5 ? [from.name, to.name] : [to.name, from.name]
  return { from, to, amount, pair: [from, to], asked }
}

/** Both accounts' locks with acquireAll, one `lost` event per account when the pair's signal aborts; undefined (after a short pause) when not granted. */
async function acquirePair(t: Transfer): Promise<MultiLease | undefined> {
  const { pair, asked } = t
  for (const r of pair) op('invoke', 'acquire', r.name)
  let lease: MultiLease
  try {
    lease = await locks.acquireAll(asked, { ttl: config.ttl, wait: config.wait })
  } catch (err) {
    for (const r of pair) op('fail', 'acquire', r.name, { error: codeOf(err) })
    await sleep(random.int(5, 50))
    return undefined
  }
  const fenceOf = (r: BankResource) => lease.fences[r.name]!
  const deadline = clockOrigin + lease.deadline
  for (const r of pair) op('ok', 'acquire', r.name, { fence: fenceOf(r), value: { deadline, asked } })
  // One signal for the pair: when it aborts, both accounts' leases are lost.
  const onAbort = () => {
    const reason = (lease.signal.reason as LockLostError | undefined)?.reason ?? 'unknown'
    for (const r of pair) emit({ kind: 'lost', worker, pid: process.pid, resource: r.name, fence: fenceOf(r), reason, time: now() })
  }
  if (lease.signal.aborted) onAbort()
  else lease.signal.addEventListener('abort', onAbort, { once: true })
  return lease
}

/**
 * Claim each row with its account's fence and read it in the same statement: every later write
 * of an older holder then meets a larger fence and touches no row. Undefined if a claim was refused.
 */
async function claimAndRead(t: Transfer, fenceOf: (r: BankResource) => number): Promise<Map<BankResource, number> | undefined> {
  const before = new Map<BankResource, number>()
  for (const r of t.pair) op('invoke', 'read', r.name, { fence: fenceOf(r) })
  for (const r of t.pair) {
    const fence = fenceOf(r)
    if (config.fencing) {
      op('invoke', 'claim', r.name, { fence })
      const claimed = await db.query<{ balance: string }>(`UPDATE ${table} SET fence = $2 WHERE id = $1 AND fence <= $2 RETURNING balance`, [id(r), fence])
      if (claimed.rowCount !== 1) {
        op('fail', 'claim', r.name, { fence, error: 'stale', value: { rows: claimed.rowCount } })
        return undefined
      }
      op('ok', 'claim', r.name, { fence })
      before.set(r, Number(claimed.rows[0]!.balance))
    } else {
      const read = await db.query<{ balance: string }>(`SELECT balance FROM ${table} WHERE id = $1`, [id(r)])
      before.set(r, Number(read.rows[0]?.balance ?? 0))
    }
    op('ok', 'read', r.name, { fence, value: { [id(r)]: before.get(r) } })
  }
  return before
}

/** Both rows written under their fences and the ledger appended, in one transaction; true if it committed. */
async function writePair(t: Transfer, fenceOf: (r: BankResource) => number, before: Map<BankResource, number>): Promise<boolean> {
  const { from, to, amount, pair } = t
  const balance = (r: BankResource) => before.get(r)! + (r === from ? -amount : amount)
  const write = (r: BankResource) => ({ account: id(r), from: id(from), to: id(to), amount, balance: balance(r) })
  for (const r of pair) op('invoke', 'write', r.name, { fence: fenceOf(r), value: write(r) })
  try {
    await db.query('BEGIN')
    const guard = config.fencing ? ' AND fence <= $2' : ''
    const update = `UPDATE ${table} SET balance = $1, fence = $2 WHERE id = $3${guard}`
    let hit = 0
    for (const r of pair) hit += (await db.query(update, [balance(r), fenceOf(r), id(r)])).rowCount ?? 0
    if (hit === 2) {
      await db.query(`INSERT INTO ${ledger} (account, fence, worker, balance) VALUES ($1, $2, $3, $4), ($5, $6, $3, $7)`, [
        id(from),
        fenceOf(from),
        worker,
        balance(from),
        id(to),
        fenceOf(to),
        balance(to),
      ])
      await db.query('COMMIT')
      for (const r of pair) op('ok', 'write', r.name, { fence: fenceOf(r), value: write(r) })
      return true
    }
    await db.query('ROLLBACK')
    for (const r of pair) op('fail', 'write', r.name, { fence: fenceOf(r), error: 'stale', value: write(r) })
  } catch (err) {
    await db.query('ROLLBACK').catch(() => {})
    for (const r of pair) op('info', 'write', r.name, { fence: fenceOf(r), error: codeOf(err), value: write(r) })
  }
  return false
}

async function releasePair(lease: MultiLease, pair: BankResource[], fenceOf: (r: BankResource) => number): Promise<void> {
  for (const r of pair) op('invoke', 'release', r.name, { fence: fenceOf(r) })
  try {
    const released = await lease.release()
    for (const r of pair) op('ok', 'release', r.name, { fence: fenceOf(r), value: { released } })
  } catch (err) {
    for (const r of pair) op('info', 'release', r.name, { fence: fenceOf(r), error: codeOf(err) })
  }
}

async function transfer(): Promise<void> {
  const t = pickTransfer()
  const lease = await acquirePair(t)
  if (!lease) return
  const fenceOf = (r: BankResource) => lease.fences[r.name]!
  try {
    const before = await claimAndRead(t, fenceOf)
    if (!before) return
    await sleep(random.int(config.hold[0], config.hold[1]))
    // The Redis-side resource: each account's last-writer record, guarded by fencedSet.
    if (await writePair(t, fenceOf, before)) for (const r of t.pair) await setLastWriter(kit, r.name, fenceOf(r))
  } finally {
    await releasePair(lease, t.pair, fenceOf)
  }
}

kit.runUntilTerm(bankStep(kit, db, transfer), { start: async () => void (await db.connect()), end: async () => void (await db.end().catch(() => {})) })
