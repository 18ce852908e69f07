// `npm run demo`: the payment race from the classic "distributed lock on Redis" article, with
// real worker processes. An account holds 1000; workers withdraw 10 at a time with
// GET balance, await, SET balance - 10.
//   (a) without a lock, updates get lost and more money is paid out than the account held;
//   (b) with fencelock (withLock + claimFence + fencedSet) the balance is exact;
//   (c) a lock holder frozen (SIGSTOP) past its ttl wakes up and writes a stale balance: the fence
//       rejects it, its lease.signal has aborted, and the balance stays exact.
// Uses REDIS_URL if set, otherwise a throwaway redis-server from PATH.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { hasRedisServer, INSTALL_HINT, startLocalRedis, type LocalRedis } from './local-redis.js'
import type { WorkerReport } from './payment-worker.js'

const START = 1000
const AMOUNT = 10
const WORKERS = 4
const DEMAND = 1200 // more than the account holds, so the lock also has to stop an overdraft
const TTL = 1000

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

  constructor(args: string[]) {
    // node --import tsx, not the tsx CLI: the pid must be the worker itself, or SIGSTOP would
    // freeze only a wrapper.
    this.proc = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'payment-worker.ts'), ...args], {
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
    const line =
      this.#lines.shift() ?? (this.#ended ? undefined : await new Promise<string | undefined>((resolve) => (this.#waiting = resolve)))
    if (line === undefined || !line.startsWith(word)) {
      throw new Error(`worker ${this.proc.pid}: expected ${word}, got ${line ?? 'end of output'}`)
    }
    return line
  }

  send(line: string): void {
    this.proc.stdin!.write(`${line}\n`)
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
      new Worker([
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

const check = (r: RunResult) =>
  r.balance === r.expected ? 'exact' : `wrong, ${Math.round(Math.abs(r.balance - r.expected) / AMOUNT)} updates lost`

function summary(r: RunResult): string[] {
  return [
    `    paid out ${r.paid} in ${r.withdrawals} withdrawals, declined ${r.declined} (insufficient funds)`,
    `    balance ${r.balance}, should be ${START} - ${r.paid} = ${r.expected}: ${check(r)}`,
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

    const ok = b.balance === b.expected && c.result.balance === c.result.expected && staleRejected === 1 && stale.signalAborted
    const lost = Math.round((a.balance - a.expected) / AMOUNT)
    console.log(
      `\nVerdict: without a lock ${lost} of ${a.withdrawals} withdrawals vanished from the balance; with fencelock ` +
        (ok ? 'every withdrawal counted, and a frozen holder could not overwrite the balance.' : 'SOMETHING WENT WRONG (see above).'),
    )
    console.log(
      `RESULT unlocked_balance=${a.balance} unlocked_expected=${a.expected} locked_balance=${b.balance} locked_expected=${b.expected}` +
        ` stale_balance=${c.result.balance} stale_expected=${c.result.expected} stale_rejected=${staleRejected}` +
        ` signal_aborted=${stale.signalAborted ? 1 : 0} ok=${ok ? 1 : 0}`,
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
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
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
