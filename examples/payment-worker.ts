// One payment worker of the demo (examples/payment-demo.ts starts several as separate processes).
// It withdraws `amount` from a balance in Redis, `withdrawals` times, with a read-modify-write:
// GET the balance, await something (a fraud check, a payment gateway), SET the new balance.
//
// Talks to the demo over stdio, one line at a time:
//   stdout: READY | HOLDING fence=<n> balance=<n> | DONE <json>
//   stdin:  GO (start) | REPLY (frozen mode: the payment gateway's answer)
import { parseArgs } from 'node:util'
import readline from 'node:readline'
import { Redis } from 'ioredis'
// Inside this repository the examples run from source; in your project: from 'fencelock'.
import { claimFence, createLocks, fencedSet, LockLostError, type Lease } from '../src/index.js'

const { values } = parseArgs({
  options: {
    mode: { type: 'string' }, // unlocked | locked | frozen
    redis: { type: 'string' },
    prefix: { type: 'string' },
    resource: { type: 'string' },
    key: { type: 'string' },
    withdrawals: { type: 'string', default: '1' },
    amount: { type: 'string', default: '10' },
    ttl: { type: 'string', default: '1000' },
  },
})
const mode = values.mode
if (mode !== 'unlocked' && mode !== 'locked' && mode !== 'frozen') throw new Error(`unknown --mode ${mode}`)
const key = values.key!
const resource = values.resource!
const amount = Number(values.amount)
const withdrawals = Number(values.withdrawals)

export interface WorkerReport {
  paid: number
  withdrawals: number
  declined: number
  /** Writes refused by the fence (stale). */
  rejected: number
  /** Frozen mode: what happened to the lease that was held across the freeze. */
  frozen?: { fence: number; read: number; staleWrite: number; signalAborted: boolean; lostReason: string | null }
}

const redis = new Redis(values.redis!)
const locks = createLocks({ redis, prefix: values.prefix!, ttl: Number(values.ttl) })
const input = readline.createInterface({ input: process.stdin })
const lines = input[Symbol.asyncIterator]()
const say = (line: string) => process.stdout.write(`${line}\n`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const report: WorkerReport = { paid: 0, withdrawals: 0, declined: 0, rejected: 0 }

async function expectLine(word: string): Promise<void> {
  const { value, done } = await lines.next()
  if (done || value !== word) throw new Error(`expected ${word} on stdin, got ${done ? 'end of input' : value}`)
}

/** The bug in the short article: nothing stops two workers from interleaving GET and SET. */
async function withdrawUnlocked(): Promise<void> {
  const balance = Number(await redis.get(key))
  if (balance < amount) return void report.declined++
  await sleep(1 + Math.random() * 3)
  await redis.set(key, String(balance - amount))
  report.paid += amount
  report.withdrawals++
}

/**
 * The same read-modify-write under the lock: claim the balance with the lease's fence, read it,
 * write with the same fence. (Without the claim, a stale holder that read before the next holder
 * could still write first, and the next holder's write would drop its update.)
 */
async function withdrawFenced(lease: Lease): Promise<void> {
  if (!(await claimFence(redis, key, lease.fence))) return void report.rejected++
  const balance = Number(await redis.get(key))
  if (balance < amount) return void report.declined++
  await sleep(1 + Math.random() * 3)
  if (await fencedSet(redis, key, String(balance - amount), lease.fence)) {
    report.paid += amount
    report.withdrawals++
  } else {
    report.rejected++
  }
}

/**
 * Holds the lock across a slow gateway call, during which the demo freezes this process (SIGSTOP)
 * until well past its ttl. It deliberately writes without checking `lease.signal` first: a pause can
 * strike between any such check and the write, so the fence has to be the last line of defence.
 */
async function withdrawFrozen(lease: Lease): Promise<void> {
  await claimFence(redis, key, lease.fence)
  const balance = Number(await redis.get(key))
  say(`HOLDING fence=${lease.fence} balance=${balance}`)
  await expectLine('REPLY')
  const written = await fencedSet(redis, key, String(balance - amount), lease.fence)
  if (written) {
    report.paid += amount
    report.withdrawals++
  } else {
    report.rejected++
  }
  // One timer tick, so that timers overdue since the freeze (the lease's deadline) have run.
  await sleep(1)
  const reason = lease.signal.reason
  report.frozen = {
    fence: lease.fence,
    read: balance,
    staleWrite: balance - amount,
    signalAborted: lease.signal.aborted,
    lostReason: reason instanceof LockLostError ? reason.reason : null,
  }
}

try {
  await redis.ping()
  say('READY')
  await expectLine('GO')
  for (let i = 0; i < withdrawals; i++) {
    if (mode === 'unlocked') await withdrawUnlocked()
    else if (mode === 'frozen') {
      // withLock itself reports that the lease was lost while the work ran: the stale write was
      // refused by the fence, and this is how the caller of withLock hears of the loss.
      const lost = await locks.withLock(resource, withdrawFrozen).then(
        () => null,
        (err: unknown) => err,
      )
      if (!(lost instanceof LockLostError)) throw lost ?? new Error('withLock returned although the lease was lost while it ran')
    } else await locks.withLock(resource, withdrawFenced)
  }
  say(`DONE ${JSON.stringify(report)}`)
} finally {
  input.close()
  process.stdin.destroy()
  await locks.close()
  await redis.quit()
}
