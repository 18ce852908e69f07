// @ts-nocheck: type-checked by test/types.test.ts against the built package (this line removed), not by the repository's tsconfig
// A consumer that imports fencelock and nothing else (ESM), compiled with each compiler's own
// `tsc --init` defaults (which name no @types: `"types": []`) and with no option but the module:
// the package's declarations must bring what they need.
import { createLocks, LockLostError, telemetry, type Lease, type RedisClient } from 'fencelock'

declare const redis: RedisClient

const locks = createLocks({ redis })
{
  await using lease: Lease = await locks.acquire('account:1', { ttl: 5_000, signal: AbortSignal.timeout(1_000) })
  lease.signal.addEventListener('abort', () => console.log(lease.signal.reason instanceof LockLostError))
  const fence: number = lease.fence
  console.log(fence, telemetry.acquire.name)
}
await locks.close()
