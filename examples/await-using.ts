// `await using`: a lease released when its block ends, however the block ends.
//
//   REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/await-using.ts
//
// Node 24 runs `await using` natively. Node 20 and 22 cannot parse it: compile it away, as tsx
// (esbuild) does here, or TypeScript >= 5.2 with a `target` below ESNext; both turn the block into
// try/finally around `lease[Symbol.asyncDispose]()`. For the types, add "ESNext.Disposable" (or
// "ESNext") to `lib` in tsconfig.json. The symbol itself is defined by Node from 20.4 on (fencelock
// does not polyfill it): on 20.0 to 20.3, run `Symbol.asyncDispose ??= Symbol.for('Symbol.asyncDispose')`
// in a module loaded before fencelock, or release in a `finally` yourself.
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
// Inside this repository the examples run from source; in your project: from 'fencelock'.
import { createLocks, LockLostError } from '../src/index.js'

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
const locks = createLocks({ redis })

/** Settles one invoice under its lock; the lease is released when the function returns or throws. */
async function settle(invoice: string, work: () => Promise<void>): Promise<void> {
  await using lease = await locks.acquire(`invoice:${invoice}`, { ttl: 5_000, wait: 2_000 })
  console.log(`${invoice}: settling under fence ${lease.fence}`)
  await work()
}

const held = async (invoice: string) => (await locks.inspect(`invoice:${invoice}`)).held

try {
  // 1. The block ends normally: released.
  await settle('A-1', () => sleep(50))
  console.log(`A-1: held after the block: ${await held('A-1')}`)

  // 2. The block throws: still released, and the error is the block's own.
  try {
    await settle('A-2', async () => {
      throw new Error('payment provider down')
    })
  } catch (err) {
    console.log(`A-2: ${(err as Error).message}; held after the block: ${await held('A-2')}`)
  }

  // 3. The block outlives its lease (no autoExtend, a 200 ms ttl, 400 ms of work): leaving the
  // block throws the lease's LockLostError, so the overrun cannot pass unnoticed.
  try {
    await using lease = await locks.acquire('invoice:A-3', { ttl: 200 })
    await sleep(400)
    console.log(`A-3: still held at the end of the block: ${lease.held}`)
  } catch (err) {
    if (!(err instanceof LockLostError)) throw err
    console.log(`A-3: ${err.code} (${err.reason})`)
  }
} finally {
  await locks.close()
  await redis.quit()
}
