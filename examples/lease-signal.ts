// lease.signal: work under a lock stops the moment the lock is lost.
//
//   REDIS_URL=redis://127.0.0.1:6379 DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//     npx tsx examples/lease-signal.ts
//
// Under one lock it starts two slow pieces of work: an HTTP request (to a local server that takes
// WORK_MS to answer) and a PostgreSQL query (pg_sleep). Both get the lease's signal, which aborts
// with LockLostError when the lease can no longer be trusted. fetch takes a signal; pg does not,
// so the query is cancelled on the server with pg_cancel_backend when the signal fires.
//
// To see it, make it lose the lock while it works, as a failover or a FLUSHALL would: delete the
// lock's key from another terminal (the example prints it). Otherwise both finish after WORK_MS.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Redis } from 'ioredis'
import pg from 'pg'
// Inside this repository the examples run from source; in your project: from 'fencelock'.
import { createLocks, LockLostError } from '../src/index.js'

const WORK_MS = Number(process.env.WORK_MS ?? 20_000)
const RESOURCE = 'report:monthly'

/** A slow upstream: it answers after WORK_MS, and says so when a client hangs up before that. */
function startSlowServer(): Promise<http.Server> {
  const server = http.createServer((_req, res) => {
    const started = performance.now()
    const timer = setTimeout(() => res.end('report data'), WORK_MS)
    res.on('close', () => {
      clearTimeout(timer)
      if (!res.writableFinished) console.log(`server: the client hung up after ${Math.round(performance.now() - started)} ms`)
    })
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

/** `sql` on a connection of `pool`, cancelled on the server (pg_cancel_backend) when `signal` aborts. */
async function query(pool: pg.Pool, sql: string, signal: AbortSignal): Promise<pg.QueryResult> {
  const client = await pool.connect()
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
    signal.throwIfAborted()
    // Another connection of the pool asks the server to cancel this one's running statement.
    const cancel = () => void pool.query('SELECT pg_cancel_backend($1)', [rows[0]!.pid]).catch(() => {})
    signal.addEventListener('abort', cancel, { once: true })
    try {
      return await client.query(sql)
    } catch (err) {
      // 57014 query_canceled: report why it was cancelled, with the database's error as the cause.
      if (signal.aborted && (err as { code?: string }).code === '57014') throw new Error(`query cancelled: ${(signal.reason as Error).message}`, { cause: err })
      throw err
    } finally {
      signal.removeEventListener('abort', cancel)
    }
  } finally {
    client.release()
  }
}

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test', max: 2 })
const server = await startSlowServer()
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/report`
const locks = createLocks({ redis })

try {
  // withLock extends the lease every ttl/3 while fn runs; a refused extension (the key is gone or
  // someone else holds it) aborts lease.signal at once, an unreachable Redis at the deadline.
  await locks.withLock(
    RESOURCE,
    async (lease) => {
      console.log(`holding ${RESOURCE} (fence ${lease.fence}); working for ${WORK_MS} ms`)
      console.log(`to take the lock away: redis-cli DEL 'fencelock:{${RESOURCE}}:L'`)
      const [http, sql] = await Promise.allSettled([
        fetch(url, { signal: lease.signal }).then((response) => response.text()),
        query(pool, `SELECT pg_sleep(${WORK_MS / 1000})`, lease.signal),
      ])
      console.log(http.status === 'fulfilled' ? `fetch: done (${http.value})` : `fetch: stopped: ${(http.reason as Error).message}`)
      console.log(sql.status === 'fulfilled' ? 'pg: done' : `pg: stopped: ${(sql.reason as Error).message}`)
    },
    { ttl: 3_000 },
  )
  console.log('the work ran under the lock from start to end')
} catch (err) {
  // withLock rethrows the loss: the work did not run under the lock all along.
  if (!(err instanceof LockLostError)) throw err
  console.log(`withLock: ${err.code} (${err.reason})`)
} finally {
  await locks.close()
  await redis.quit()
  await pool.end()
  server.close()
}
