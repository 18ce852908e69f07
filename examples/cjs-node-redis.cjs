// fencelock from CommonJS, with node-redis: acquire and release by hand, tryAcquire, withLock.
//
//   npm install fencelock redis
//   REDIS_URL=redis://127.0.0.1:6379 node cjs-node-redis.cjs
//
// `require('fencelock')` loads the package's CommonJS build (dist/index.cjs); an ES module gets
// the same API from `import { createLocks } from 'fencelock'`.
'use strict'

const { createClient } = require('redis')
const { createLocks, LockTimeoutError } = require('fencelock')

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function main() {
  const client = createClient({ url: process.env.REDIS_URL || 'redis://127.0.0.1:6379' })
  // node-redis emits 'error' on every failed reconnect; without a listener it would crash the process.
  client.on('error', (err) => console.error(`redis: ${err.message}`))
  await client.connect()
  // The client stays yours: fencelock only adds one pub/sub connection of its own (duplicate()).
  const locks = createLocks({ redis: client, ttl: 10_000, wait: 5_000 })
  try {
    // 1. By hand: acquire waits (at most `wait` ms) for the lock; always release in finally.
    const lease = await locks.acquire('report:daily')
    try {
      console.log(`acquired report:daily, fence ${lease.fence}`)
      // While it is held, nobody else gets it: tryAcquire answers null at once, acquire times out.
      console.log(`tryAcquire while held: ${await locks.tryAcquire('report:daily')}`)
      try {
        await locks.acquire('report:daily', { wait: 200 })
      } catch (err) {
        if (!(err instanceof LockTimeoutError)) throw err
        console.log(`acquire while held: ${err.code}`)
      }
      await sleep(50) // the work the lock protects; pass lease.fence to whatever it writes
    } finally {
      console.log(`released: ${await lease.release()}`)
    }

    // 2. withLock: acquired, extended while fn runs, released whatever happens; fn's value is returned.
    const rows = await locks.withLock('report:daily', async (lease) => {
      console.log(`withLock: fence ${lease.fence}, held ${lease.held}`)
      await sleep(50)
      return 42
    })
    console.log(`withLock returned ${rows}`)

    const info = await locks.inspect('report:daily')
    console.log(`afterwards: held ${info.held}, last fence ${info.fence}`)
  } finally {
    await locks.close() // closes fencelock's pub/sub connection, not your client
    await client.close() // node-redis 5 (4: client.quit())
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
