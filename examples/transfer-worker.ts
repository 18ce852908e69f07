// One transfer worker of the demo (examples/payment-demo.ts starts several as separate processes).
// It moves money between two random accounts, `transfers` times, with a read-modify-write of both
// balances: GET both, await something (a fraud check), SET both.
//
// Talks to the demo over stdio, one line at a time; one process serves several runs:
//   stdin:  GO <unlocked|locked> <key prefix>   (a run on the balances `<key prefix>{<account>}:balance`)
//   stdout: READY (once) | DONE <json> (after each run)
import { parseArgs } from 'node:util'
import readline from 'node:readline'
import { Redis } from 'ioredis'
// Inside this repository the examples run from source; in your project: from 'fencelock'.
import { claimFence, createLocks, fencedSet, type MultiLease } from '../src/index.js'

const { values } = parseArgs({
  options: {
    redis: { type: 'string' },
    prefix: { type: 'string' },
    accounts: { type: 'string' }, // comma-separated resource names
    transfers: { type: 'string', default: '1' },
    'max-amount': { type: 'string', default: '100' }, // each transfer moves 1 to this much
    ttl: { type: 'string', default: '1000' },
  },
})
const accounts = values.accounts!.split(',')
const transfers = Number(values.transfers)
const maxAmount = Number(values['max-amount'])

export interface TransferReport {
  transfers: number
  declined: number
  /** Transfers whose fenced claim or write was refused (a lease lost midway). */
  rejected: number
  /** What this worker's transfers moved into each account (negative: out of it). */
  net: Record<string, number>
}

const redis = new Redis(values.redis!)
const locks = createLocks({ redis, prefix: values.prefix!, ttl: Number(values.ttl) })
const say = (line: string) => process.stdout.write(`${line}\n`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!

/** The bug: two transfers touching one account overwrite each other's SET. */
async function transferUnlocked(report: TransferReport, key: (account: string) => string, from: string, to: string, amount: number): Promise<void> {
  const fromBalance = Number(await redis.get(key(from)))
  const toBalance = Number(await redis.get(key(to)))
  if (fromBalance < amount) return void report.declined++
  await sleep(1 + Math.random() * 3)
  await redis.set(key(from), String(fromBalance - amount))
  await redis.set(key(to), String(toBalance + amount))
  record(report, from, to, amount)
}

/**
 * The same under one lease on both accounts: claim each balance with that account's fence before
 * reading it, then write each with the same fence, so a holder that lost its lease midway can
 * neither write a stale balance nor have its update silently dropped.
 */
async function transferFenced(
  report: TransferReport,
  key: (account: string) => string,
  from: string,
  to: string,
  amount: number,
  lease: MultiLease,
): Promise<void> {
  const fence = (account: string) => lease.fences[account]!
  if (!(await claimFence(redis, key(from), fence(from))) || !(await claimFence(redis, key(to), fence(to)))) return void report.rejected++
  const fromBalance = Number(await redis.get(key(from)))
  const toBalance = Number(await redis.get(key(to)))
  if (fromBalance < amount) return void report.declined++
  await sleep(1 + Math.random() * 3)
  // Each write is refused only if a newer lease claimed that account: this one was lost. (A real
  // ledger records the transfer in one fenced write, so that it cannot stop halfway.)
  if (!(await fencedSet(redis, key(from), String(fromBalance - amount), fence(from)))) return void report.rejected++
  if (!(await fencedSet(redis, key(to), String(toBalance + amount), fence(to)))) return void report.rejected++
  record(report, from, to, amount)
}

function record(report: TransferReport, from: string, to: string, amount: number): void {
  report.net[from]! -= amount
  report.net[to]! += amount
  report.transfers++
}

async function run(mode: string, keyPrefix: string): Promise<TransferReport> {
  const report: TransferReport = { transfers: 0, declined: 0, rejected: 0, net: Object.fromEntries(accounts.map((a) => [a, 0])) }
  const key = (account: string) => `${keyPrefix}{${account}}:balance`
  for (let i = 0; i < transfers; i++) {
    const from = pick(accounts)
    const to = pick(accounts.filter((a) => a !== from))
    const amount = 1 + Math.floor(Math.random() * maxAmount)
    if (mode === 'unlocked') await transferUnlocked(report, key, from, to, amount)
    // Named in either order: withLocks sorts them, so [a, b] and [b, a] never deadlock.
    else await locks.withLocks(Math.random() < 0.5 ? [from, to] : [to, from], (lease) => transferFenced(report, key, from, to, amount, lease))
  }
  return report
}

const input = readline.createInterface({ input: process.stdin })
try {
  await redis.ping()
  say('READY')
  for await (const line of input) {
    const [word, mode, keyPrefix] = line.split(' ')
    if (word !== 'GO' || (mode !== 'unlocked' && mode !== 'locked') || !keyPrefix)
      throw new Error(`expected GO <unlocked|locked> <key prefix> on stdin, got ${line}`)
    say(`DONE ${JSON.stringify(await run(mode, keyPrefix))}`)
  }
} finally {
  input.close()
  await locks.close()
  await redis.quit()
}
