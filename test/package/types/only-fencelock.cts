// @ts-nocheck: type-checked by test/types.test.ts against the built package (this line removed), not by the repository's tsconfig
// The same consumer in CommonJS (`require` resolves dist/index.d.cts), written as `import = require`
// because `tsc --init` turns on verbatimModuleSyntax, which refuses `import {}` in a .cts file.
import fencelock = require('fencelock')
import type { Lease, RedisClient } from 'fencelock'

declare const redis: RedisClient

async function main(): Promise<number> {
  const locks = fencelock.createLocks({ redis })
  await using lease: Lease = await locks.acquire('account:1', { ttl: 5_000 })
  lease.signal.addEventListener('abort', () => console.log(lease.signal.reason instanceof fencelock.LockLostError))
  await locks.close()
  return lease.fence
}

void main()
