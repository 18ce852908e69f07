// @ts-nocheck: type-checked by test/types.test.ts against the built package (this line removed), not by the repository's tsconfig
// A CommonJS consumer of the published types (`require` resolves dist/index.d.cts).
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { claimFence, createLocks, fencedSet, LockTimeoutError, type Lease, type RedisClient } from 'fencelock'

export async function main(url: string): Promise<number> {
  const redis: RedisClient = new Redis(url)
  const node = await createClient({ url }).connect()
  const locks = createLocks({ redis: [redis, node] })
  const lease: Lease = await locks.acquire('r', { wait: 0 }).catch((err: unknown) => {
    if (err instanceof LockTimeoutError) console.error(err.resource)
    throw err
  })
  await claimFence(node, 'k', lease.fence)
  await fencedSet(redis, 'k', 'v', lease.fence)
  await lease.release()
  // @ts-expect-error: a URL is not a client
  createLocks({ redis: url })
  return lease.fence
}
