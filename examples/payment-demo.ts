// `npm run demo`: the payment race from the classic "distributed lock on Redis" article, with
// real worker processes. An account holds 1000; workers withdraw 10 at a time with
// GET balance, await, SET balance - 10.
//   (a) without a lock, updates get lost and more money is paid out than the account held;
//   (b) with fencelock (withLock + claimFence + fencedSet) the balance is exact;
//   (c) a lock holder frozen (SIGSTOP) past its ttl wakes up and writes a stale balance: the fence
//       rejects it, its lease.signal has aborted, and the balance stays exact;
//   (d) transfers between 4 accounts (GET both, await, SET both): without a lock money is created
//       or destroyed; with withLocks on both accounts (named in any order) + claimFence + fencedSet
//       with each account's fence, the total and every balance are exact.
// Uses REDIS_URL if set, otherwise a throwaway redis-server from PATH.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { hasRedisServer, INSTALL_HINT, startLocalRedis, type LocalRedis } from './local-redis.js'
import type { WorkerReport } from './payment-worker.js'
import type { TransferReport } from './transfer-worker.js'

const START = 1000
const AMOUNT = 10
const WORKERS = 4
const DEMAND = 1200 // more than the account holds, so the lock also has to stop an overdraft
const TTL = 1000
const ACCOUNTS = ['account:1', 'account:2', 'account:3', 'account:4']
const OPENING = 10_000 // each account's balance before the transfers
const TRANSFERS = 25 // per worker
// Each transfer moves 1 to MAX_AMOUNT. Without a lock, lost updates create and destroy money at
// random: with amounts this spread out, the net comes out at exactly 0 about once in 10,000 runs.
const MAX_AMOUNT = 1000

const here = path.dirname(fileURLToPath(import.meta.url))
const live = new Set<ChildProcess>()

interface RunResult {
  balance: number
  expected: number
  paid: number
  withdrawals: number
  declined: number
}

/** A worker process and its stdout, line by line. */
class Worker {
  readonly proc: ChildProcess
  readonly #lines: string[] = []
  #waiting: ((line: string | undefined) => void) | undefined
  #ended = false

  constructor(script: string, args: string[]) {
    // node --import tsx, not the tsx CLI: the pid must be the worker itself, or SIGSTOP would
    // freeze only a wrapper.
    this.proc = spawn(process.execPath, ['--import', 'tsx', path.join(here, script), ...args], {
      cwd: path.join(here, '..'),
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    live.add(this.proc)
    this.proc.once('exit', () => live.delete(this.proc))
    const rl = readline.createInterface({ input: this.proc.stdout! })
    rl.on('line', (line) => this.#push(line))
    rl.on('close', () => {
      this.#ended = true
      this.#waiting?.(undefined)
    })
  }

  #push(line: string): void {
    if (this.#waiting) {
      const resolve = this.#waiting
      this.#waiting = undefined
      resolve(line)
    } else this.#lines.push(line)
  }

  /** The next line, which must start with `word`. */
  async next(word: string): Promise<string> {
    const line = this.#lines.shift() ?? (this.#ended ? undefined : await new Promise<string | undefined>((resolve) => (this.#waiting = resolve)))
    if (line === undefined || !line.startsWith(word)) {
      throw new Error(`worker ${this.proc.pid}: expected ${word}, got ${line ?? 'end of output'}`)
    }
    return line
  }

  send(line: string): void {
    this.proc.stdin!.write(`${line}\n`)
  }

  /** No more input: a transfer worker exits then. */
  close(): void {
    this.proc.stdin!.end()
  }

  #report: Promise<WorkerReport> | undefined

  /** The worker's final report (its DONE line); safe to await more than once. */
  report(): Promise<WorkerReport> {
    this.#report ??= this.next('DONE').then((line) => JSON.parse(line.slice('DONE '.length)) as WorkerReport)
    return this.#report
  }
}

async function run(
  redis: Redis,
  url: string,
  prefix: string,
  modes: ('unlocked' | 'locked' | 'frozen')[],
  during?: (workers: Worker[]) => Promise<void>,
): Promise<{ result: RunResult; reports: WorkerReport[] }> {
  const key = `${prefix}{account:42}:balance`
  await redis.set(key, String(START))
  const normal = modes.filter((m) => m !== 'frozen').length
  const workers = modes.map(
    (mode) =>
      new Worker('payment-worker.ts', [
        `--mode=${mode}`,
        `--redis=${url}`,
        `--prefix=${prefix}`,
        '--resource=account:42',
        `--key=${key}`,
        `--withdrawals=${mode === 'frozen' ? 1 : Math.ceil(DEMAND / AMOUNT / normal)}`,
        `--amount=${AMOUNT}`,
        `--ttl=${TTL}`,
      ]),
  )
  for (const worker of workers) await worker.next('READY')
  if (during) await during(workers)
  else for (const worker of workers) worker.send('GO')
  const reports = await Promise.all(workers.map((w) => w.report()))
  const sum = (field: 'paid' | 'withdrawals' | 'declined') => reports.reduce((total, r) => total + r[field], 0)
  const balance = Number(await redis.get(key))
  const paid = sum('paid')
  return {
    result: { balance, expected: START - paid, paid, withdrawals: sum('withdrawals'), declined: sum('declined') },
    reports,
  }
}

const check = (r: RunResult) => (r.balance === r.expected ? 'exact' : `wrong, ${Math.round(Math.abs(r.balance - r.expected) / AMOUNT)} updates lost`)

function summary(r: RunResult): string[] {
  return [
    `    paid out ${r.paid} in ${r.withdrawals} withdrawals, declined ${r.declined} (insufficient funds)`,
    `    balance ${r.balance}, should be ${START} - ${r.paid} = ${r.expected}: ${check(r)}`,
  ]
}

interface TransferResult {
  transfers: number
  declined: number
  rejected: number
  total: number
  balances: number[]
  /** Each account's opening balance plus what the transfers that were made moved into it. */
  expected: number[]
}

/** One run of the transfer workers (they serve several): opens the accounts, lets them go, reads the balances. */
async function transferRun(redis: Redis, workers: Worker[], mode: 'unlocked' | 'locked', keyPrefix: string): Promise<TransferResult> {
  const key = (account: string) => `${keyPrefix}{${account}}:balance`
  for (const account of ACCOUNTS) await redis.set(key(account), String(OPENING))
  for (const worker of workers) worker.send(`GO ${mode} ${keyPrefix}`)
  const reports = await Promise.all(workers.map(async (w) => JSON.parse((await w.next('DONE')).slice('DONE '.length)) as TransferReport))
  const sum = (field: 'transfers' | 'declined' | 'rejected') => reports.reduce((total, r) => total + r[field], 0)
  const balances = await Promise.all(ACCOUNTS.map(async (account) => Number(await redis.get(key(account)))))
  return {
    transfers: sum('transfers'),
    declined: sum('declined'),
    rejected: sum('rejected'),
    total: balances.reduce((a, b) => a + b, 0),
    balances,
    expected: ACCOUNTS.map((account) => OPENING + reports.reduce((total, r) => total + r.net[account]!, 0)),
  }
}

const TOTAL = OPENING * ACCOUNTS.length
const accountsExact = (r: TransferResult) => r.balances.every((b, i) => b === r.expected[i])

function transferSummary(r: TransferResult): string[] {
  const drift = r.total - TOTAL
  const wrong = r.balances.filter((b, i) => b !== r.expected[i]).length
  return [
    `      ${r.transfers} transfers, declined ${r.declined} (insufficient funds)${r.rejected ? `, ${r.rejected} refused by a fence` : ''}`,
    `      total ${r.total}, should be ${TOTAL}: ${drift === 0 ? 'exact' : `wrong, ${Math.abs(drift)} ${drift > 0 ? 'created out of nothing' : 'destroyed'}`}`,
    `      balances ${r.balances.join(', ')}, should be ${r.expected.join(', ')}: ${wrong === 0 ? 'exact' : `${wrong} of ${ACCOUNTS.length} wrong`}`,
  ]
}

async function main(): Promise<number> {
  let local: LocalRedis | undefined
  let url = process.env.REDIS_URL
  if (!url) {
    if (!hasRedisServer()) {
      console.error(`payment-demo: ${INSTALL_HINT}`)
      return 1
    }
    local = await startLocalRedis()
    url = local.url
  }
  // No reconnecting: if Redis is not there, say so at once.
  const redis = new Redis(url, { lazyConnect: true, retryStrategy: () => null })
  let connectError: Error | undefined
  redis.on('error', (err: Error) => void (connectError ??= err))
  const prefix = `fencelock-demo:${randomBytes(4).toString('hex')}:`
  try {
    await redis.connect().catch((err: Error) => {
      throw new Error(`cannot connect to Redis at ${url}: ${(connectError ?? err).message}`)
    })
    console.log(`fencelock demo: an account holds ${START}; worker processes withdraw ${AMOUNT} at a time`)
    console.log(`(GET balance, await, SET balance - ${AMOUNT}) until ${DEMAND} has been asked for.`)
    console.log(`Redis: ${local ? `throwaway redis-server at ${url}` : url}\n`)

    console.log(`(a) ${WORKERS} workers, no lock`)
    const a = (await run(redis, url, `${prefix}a:`, Array(WORKERS).fill('unlocked'))).result
    for (const line of summary(a)) console.log(line)
    if (a.paid > START) console.log(`    overdraft: paid out ${a.paid - START} more than the account ever held`)

    console.log(`\n(b) ${WORKERS} workers, locks.withLock + claimFence + fencedSet (ttl ${TTL} ms, auto-extended)`)
    const b = (await run(redis, url, `${prefix}b:`, Array(WORKERS).fill('locked'))).result
    for (const line of summary(b)) console.log(line)

    // Started now, so that they get ready while (c) waits out the frozen holder's ttl.
    const transferWorkers = Array.from(
      { length: WORKERS },
      () =>
        new Worker('transfer-worker.ts', [
          `--redis=${url}`,
          `--prefix=${prefix}d:`,
          `--accounts=${ACCOUNTS.join(',')}`,
          `--transfers=${TRANSFERS}`,
          `--max-amount=${MAX_AMOUNT}`,
          `--ttl=${TTL}`,
        ]),
    )

    console.log(`\n(c) as (b), but worker 1 is frozen (SIGSTOP) while it holds the lock`)
    let frozenFor = 0
    const c = await run(redis, url, `${prefix}c:`, ['frozen', ...Array<'locked'>(WORKERS - 1).fill('locked')], async ([frozen, ...others]) => {
      frozen!.send('GO')
      const holding = await frozen!.next('HOLDING')
      frozen!.proc.kill('SIGSTOP')
      const stoppedAt = performance.now()
      const [, fence, read] = /fence=(\d+) balance=(\d+)/.exec(holding) ?? []
      console.log(`    worker 1 took the lock (fence ${fence}), read balance ${read}, froze`)
      // The gateway answers while worker 1 is frozen: the reply waits in its stdin.
      frozen!.send('REPLY')
      for (const worker of others) worker.send('GO')
      await Promise.all(others.map((w) => w.report()))
      frozenFor = performance.now() - stoppedAt
      frozen!.proc.kill('SIGCONT')
    })
    const stale = c.reports[0]!.frozen!
    const staleRejected = c.reports[0]!.rejected
    console.log(`    the ${WORKERS - 1} other workers got the lock once its ttl ran out, and finished`)
    console.log(`    worker 1 resumed (SIGCONT) after ${(frozenFor / 1000).toFixed(1)} s and wrote its stale balance ${stale.staleWrite}:`)
    console.log(
      `    ${staleRejected === 1 ? 'rejected by the fence' : 'ACCEPTED'}; lease.signal ${stale.signalAborted ? `aborted (LockLostError, ${stale.lostReason})` : 'NOT aborted'}`,
    )
    for (const line of summary(c.result)) console.log(line)

    console.log(`\n(d) transfers: ${ACCOUNTS.length} accounts hold ${OPENING} each (${TOTAL} in all); ${WORKERS} workers make ${TRANSFERS} transfers each,`)
    console.log(`    of 1 to ${MAX_AMOUNT} between two random accounts (GET both balances, await, SET both)`)
    for (const worker of transferWorkers) await worker.next('READY')
    console.log('    no lock:')
    const du = await transferRun(redis, transferWorkers, 'unlocked', `${prefix}d-unlocked:`)
    for (const line of transferSummary(du)) console.log(line)
    console.log("    locks.withLocks([from, to] in random order) + claimFence + fencedSet with each account's fence:")
    const dl = await transferRun(redis, transferWorkers, 'locked', `${prefix}d-locked:`)
    for (const line of transferSummary(dl)) console.log(line)
    for (const worker of transferWorkers) worker.close()

    const transfersOk = dl.total === TOTAL && accountsExact(dl) && dl.rejected === 0
    const ok = b.balance === b.expected && c.result.balance === c.result.expected && staleRejected === 1 && stale.signalAborted && transfersOk
    const lost = Math.round((a.balance - a.expected) / AMOUNT)
    const drift = du.total - TOTAL
    const transfersWrong = drift === 0 ? 'transfers lost updates' : `transfers ${drift > 0 ? 'created' : 'destroyed'} ${Math.abs(drift)}`
    console.log(
      `\nVerdict: without a lock ${lost} of ${a.withdrawals} withdrawals vanished from the balance and ${transfersWrong}; with fencelock ` +
        (ok ? 'every withdrawal and every transfer counted, and a frozen holder could not overwrite the balance.' : 'SOMETHING WENT WRONG (see above).'),
    )
    console.log(
      `RESULT unlocked_balance=${a.balance} unlocked_expected=${a.expected} locked_balance=${b.balance} locked_expected=${b.expected}` +
        ` stale_balance=${c.result.balance} stale_expected=${c.result.expected} stale_rejected=${staleRejected}` +
        ` signal_aborted=${stale.signalAborted ? 1 : 0}` +
        ` transfer_unlocked_total=${du.total} transfer_locked_total=${dl.total} transfer_expected_total=${TOTAL}` +
        ` transfer_unlocked_accounts_exact=${accountsExact(du) ? 1 : 0} transfer_locked_accounts_exact=${accountsExact(dl) ? 1 : 0}` +
        ` transfer_locked_transfers=${dl.transfers} ok=${ok ? 1 : 0}`,
    )
    return ok ? 0 : 1
  } finally {
    if (redis.status === 'ready') {
      if (!local) await deleteKeys(redis, prefix).catch(() => {})
      await redis.quit()
    }
    await local?.stop()
  }
}

/** On a shared Redis (REDIS_URL), leave nothing behind. */
async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
    cursor = next
    if (keys.length > 0) await redis.del(...keys)
  } while (cursor !== '0')
}

function killWorkers(): void {
  for (const proc of live) {
    proc.kill('SIGCONT') // a frozen worker could not act on anything else
    proc.kill('SIGKILL')
  }
}
process.once('exit', killWorkers)
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.once(signal, () => {
    killWorkers()
    process.exit(code)
  })
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (err: unknown) => {
    console.error(`payment-demo: ${err instanceof Error ? err.message : String(err)}`)
    process.exitCode = 1
  },
)
