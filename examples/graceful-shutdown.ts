// A worker that shuts down cleanly on SIGTERM (what Kubernetes, systemd and docker stop send).
//
//   REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/graceful-shutdown.ts     (then Ctrl-C or kill)
//
// It holds a `worker:leader` lease for as long as it runs (auto-extended), and takes jobs one at a
// time, each under its own withLock. On SIGTERM (or SIGINT) it:
//   1. takes no new job: the loop ends, and a wait for a job's lock is aborted by the same signal;
//   2. lets the current job finish, for at most GRACE_MS; then the job's signal aborts it;
//   3. calls locks.close({ release: true }): every lease still held (the leader's) is released
//      now, instead of blocking the next worker until its ttl runs out;
//   4. quits the Redis client and exits with code 0.
// A second SIGTERM or SIGINT ends the process at once (the handlers run once).
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
// Inside this repository the examples run from source; in your project: from 'fencelock'.
import { createLocks, LockAbortedError } from '../src/index.js'

const JOB_MS = Number(process.env.JOB_MS ?? 1_000)
const GRACE_MS = Number(process.env.GRACE_MS ?? 5_000)

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
const locks = createLocks({ redis, ttl: 5_000 })

// `stopping` aborts on the signal: no new work. `deadline` aborts GRACE_MS later: stop the current job.
const stopping = new AbortController()
const deadline = new AbortController()
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    console.log(`${signal}: taking no new job, giving the current one ${GRACE_MS} ms`)
    stopping.abort(new Error(signal))
    setTimeout(() => deadline.abort(new Error(`the ${GRACE_MS} ms grace period is over`)), GRACE_MS).unref()
  })
}

/** One job: JOB_MS of work that stops early when `signal` aborts (lease lost, or grace over). */
async function runJob(id: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(JOB_MS, undefined, { signal })
  } catch (err) {
    throw signal.aborted ? signal.reason : err // why it stopped, not just "The operation was aborted"
  }
  console.log(`job ${id}: done`)
}

// Held while the process runs; only close({ release: true }) gives it back.
const leader = await locks.acquire('worker:leader', { autoExtend: true })
console.log(`worker ${process.pid}: leader lease (fence ${leader.fence}); waiting for SIGTERM`)

for (let id = 1; !stopping.signal.aborted; id++) {
  try {
    await locks.withLock(
      `job:${id}`,
      async (lease) => {
        console.log(`job ${id}: started (fence ${lease.fence})`)
        // The job stops if its lease is lost or the grace period ends, whichever comes first.
        await runJob(id, AbortSignal.any([lease.signal, deadline.signal]))
      },
      { signal: stopping.signal },
    ) // a wait for the job's lock ends at once on SIGTERM
  } catch (err) {
    if (err instanceof LockAbortedError) break // SIGTERM while waiting for the lock
    // The job was stopped (grace over, or lease lost): log it, take no further job if stopping.
    console.log(`job ${id}: stopped: ${(err as Error).message}`)
  }
}

await locks.close({ release: true })
console.log(`released the leader lease: ${!leader.held}`)
await redis.quit()
console.log('bye')
