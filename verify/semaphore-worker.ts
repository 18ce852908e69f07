// One semaphore worker process: takes a permit of the run's semaphore and does units of protected
// work under it, using only fencelock's public API, through the fault proxies. Every step is one
// JSON line on stdout, timed by CLOCK_MONOTONIC (the same clock in every process), so that the
// checker can count how many holders were inside at once.
import type { Lease, LockLostError } from '../src/index.js'
import { monotonicNow } from './history.js'
import { codeOf, sleep, workerKit } from './worker-kit.js'

// A lease's deadline is on this process's performance.now(); the history's clock is CLOCK_MONOTONIC.
// They do not even tick at the same rate (performance.now() was measured ~280 ppm slow here), so a
// deadline is converted when it is recorded, from the time it has left, and the worker then checks
// the recorded value: exactly what the checker sees.
const now = monotonicNow
const toHistory = (perfMs: number): number => now() + (perfMs - performance.now())
const kit = workerKit(now)
const { config, worker, random, emit, op, locks } = kit
if (!config.semaphore) throw new Error('semaphore-worker: no semaphore section in the worker config')
const sem = config.semaphore
const resource = config.resources[0]!.name
const pool = locks.semaphore(resource, { limit: sem.limit })

async function holdPermit(): Promise<void> {
  op('invoke', 'acquire', resource)
  let permit: Lease
  try {
    permit = await pool.acquire({ ttl: config.ttl, wait: config.wait })
  } catch (err) {
    op('fail', 'acquire', resource, { error: codeOf(err) })
    await sleep(random.int(5, 50))
    return
  }
  const fence = permit.fence
  let deadline = toHistory(permit.deadline)
  const units = random.int(sem.units[0], sem.units[1])
  op('ok', 'acquire', resource, { fence, value: { deadline, token: permit.token, units } })
  const onAbort = () => {
    const reason = (permit.signal.reason as LockLostError | undefined)?.reason ?? 'unknown'
    emit({ kind: 'lost', worker, pid: process.pid, resource, fence, reason, time: now() })
  }
  if (permit.signal.aborted) onAbort()
  else permit.signal.addEventListener('abort', onAbort, { once: true })

  try {
    for (let unit = 0; unit < units; unit++) {
      const length = random.int(sem.unitMs[0], sem.unitMs[1])
      // Not enough validity left for this unit: extend first (a lost permit's extend rejects).
      if (deadline - now() < length + 50) {
        op('invoke', 'extend', resource, { fence })
        try {
          await permit.extend()
          deadline = toHistory(permit.deadline)
          op('ok', 'extend', resource, { fence, value: { deadline } })
        } catch (err) {
          op('fail', 'extend', resource, { fence, error: codeOf(err) })
        }
      }
      const t = now()
      // The check a correct holder makes before each unit of work; the control run skips it.
      if (sem.checks && (permit.signal.aborted || t >= deadline)) break
      op('invoke', 'work', resource, { fence, value: { unit, of: units } }, t)
      await sleep(length)
      op('ok', 'work', resource, { fence, value: { unit } })
    }
  } finally {
    op('invoke', 'release', resource, { fence })
    try {
      const released = await permit.release()
      op('ok', 'release', resource, { fence, value: { released } })
    } catch (err) {
      op('info', 'release', resource, { fence, error: codeOf(err) })
    }
  }
}

kit.runUntilTerm(holdPermit)
