// One candidate process (`--primitive election`): campaigns in the run's election, and as the
// leader does a few rounds of read-modify-write on one PostgreSQL row (a counter) guarded by its
// term (proclaiming a new value now and then), then resigns and campaigns again; meanwhile its observer records every state
// `election.observe` yields. Public API only, through the fault proxies; every step is one JSON
// line on stdout, timed by CLOCK_MONOTONIC (the checker compares processes).
import { LockLostError, type Term } from '../src/index.js'
import { monotonicNow } from './history.js'
import { bank, bankStep, codeOf, sleep, workerKit } from './worker-kit.js'

// A term's deadline is on this process's performance.now(): converted from the time it has left.
const now = monotonicNow
const toHistory = (perfMs: number): number => now() + (perfMs - performance.now())
const kit = workerKit(now)
const { config, worker, random, emit, op, locks } = kit
const { db, table, ledger } = bank(config)
if (!config.election) throw new Error('election-worker: no election section in the worker config')
const rounds = config.election.rounds
const name = config.resources[0]!.name
const row = config.resources[0]!.accounts[0]!
// The value observers see names the process: a respawned slot is another candidate.
const value = `${worker}:${process.pid}`
const election = locks.election(name, { ttl: config.ttl })
const observing = new AbortController()
/** The current term's deadline as last recorded (history clock). */
let toldDeadline = 0

/** Every state the observer yields, in the order it yields them. */
async function observe(): Promise<void> {
  try {
    for await (const leader of election.observe({ signal: observing.signal })) {
      op('ok', 'observe', name, { value: leader ? { fence: leader.fence, version: leader.version, leader: leader.value } : { leader: null } })
    }
  } catch (err) {
    op('info', 'observe', name, { error: codeOf(err) })
  }
}

/** The term, its loss recorded as a `lost` event; undefined (after a short pause) when not elected. */
async function campaign(): Promise<Term | undefined> {
  op('invoke', 'acquire', name)
  let term: Term
  try {
    term = await election.campaign(value, { ttl: config.ttl, wait: config.wait })
  } catch (err) {
    op('fail', 'acquire', name, { error: codeOf(err) })
    await sleep(random.int(5, 50))
    return undefined
  }
  const fence = term.fence
  toldDeadline = toHistory(term.deadline)
  op('ok', 'acquire', name, { fence, value: { deadline: toldDeadline, leader: value } })
  const onAbort = () => {
    const reason = (term.signal.reason as LockLostError | undefined)?.reason ?? 'unknown'
    emit({ kind: 'lost', worker, pid: process.pid, resource: name, fence, reason, time: now() })
  }
  if (term.signal.aborted) onAbort()
  else term.signal.addEventListener('abort', onAbort, { once: true })
  return term
}

/**
 * One round of the leader's work: claim the row with the term (fencing on; the README's pattern),
 * read the counter, hold, write counter + 1 guarded by the term and append to the log in one
 * transaction. The control run writes unguarded. True if the write committed.
 */
async function round(term: Term): Promise<boolean> {
  const fence = term.fence
  if (config.fencing) {
    op('invoke', 'claim', name, { fence })
    const claimed = await db.query(`UPDATE ${table} SET fence = $1 WHERE id = $2 AND fence <= $1`, [fence, row])
    if (claimed.rowCount !== 1) {
      op('fail', 'claim', name, { fence, error: 'stale' })
      return false
    }
    op('ok', 'claim', name, { fence })
  }
  // The term is extended in the background: tell the nemesis its deadline (a pause "just past the deadline" aims at it).
  const deadline = toHistory(term.deadline)
  if (Math.abs(deadline - toldDeadline) > 5) {
    op('ok', 'extend', name, { fence, value: { deadline } })
    toldDeadline = deadline
  }
  op('invoke', 'read', name, { fence })
  const read = await db.query<{ balance: string }>(`SELECT balance FROM ${table} WHERE id = $1`, [row])
  const count = Number(read.rows[0]?.balance ?? 0)
  op('ok', 'read', name, { fence, value: { count } })
  await sleep(random.int(config.hold[0], config.hold[1]))
  op('invoke', 'write', name, { fence, value: { count: count + 1 } })
  try {
    await db.query('BEGIN')
    const guard = config.fencing ? ' AND fence <= $2' : ''
    const written = await db.query(`UPDATE ${table} SET balance = $1, fence = $2 WHERE id = $3${guard}`, [count + 1, fence, row])
    if (written.rowCount === 1) {
      await db.query(`INSERT INTO ${ledger} (account, fence, worker, balance) VALUES ($1, $2, $3, $4)`, [row, fence, value, count + 1])
      await db.query('COMMIT')
      op('ok', 'write', name, { fence, value: { count: count + 1 } })
      return true
    }
    await db.query('ROLLBACK')
    op('fail', 'write', name, { fence, error: 'stale', value: { count: count + 1 } })
  } catch (err) {
    await db.query('ROLLBACK').catch(() => {})
    op('info', 'write', name, { fence, error: codeOf(err) })
  }
  return false
}

async function proclaim(term: Term, next: string): Promise<void> {
  op('invoke', 'proclaim', name, { fence: term.fence, value: { leader: next } })
  try {
    await term.proclaim(next)
    op('ok', 'proclaim', name, { fence: term.fence, value: { leader: next } })
  } catch (err) {
    // Refused: the term no longer leads. Anything else (Redis unreachable): outcome unknown.
    op(err instanceof LockLostError ? 'fail' : 'info', 'proclaim', name, { fence: term.fence, error: codeOf(err) })
  }
}

/** Campaign, lead for a few rounds (the check correct code makes: the signal, before each round), proclaim now and then, resign. */
async function lead(): Promise<void> {
  const term = await campaign()
  if (!term) return
  const fence = term.fence
  try {
    const planned = random.int(rounds[0], rounds[1])
    for (let i = 0; i < planned && !term.signal.aborted; i++) {
      if (!(await round(term))) break
      // Now and then a new value in the same term: observers must see it after the term, in order.
      if (random.next() < 0.25) await proclaim(term, `${value}#${i}`)
    }
  } finally {
    op('invoke', 'release', name, { fence })
    try {
      const released = await term.resign()
      op('ok', 'release', name, { fence, value: { released } })
    } catch (err) {
      op('info', 'release', name, { fence, error: codeOf(err) })
    }
  }
}

kit.runUntilTerm(bankStep(kit, db, lead), {
  start: async () => {
    await db.connect()
    void observe()
  },
  end: async () => {
    observing.abort()
    await db.end().catch(() => {})
  },
})
