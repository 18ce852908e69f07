// Signal finding from `npm run verify` (docs/evidence/verify.md, finding 1): Redis restarts empty while a
// lease is held; another client acquires (with a larger fence); the first holder's release()
// resolves false, yet its signal never aborts, so code that listens to the signal never learns
// the lease was lost.
//   npx tsx verify/repro/release-unsignalled.ts   (exit 1 while the finding holds)
import { Redis } from 'ioredis'
import { createLocks } from '../../src/index.js'
import { startRedis } from '../../harness/redis-server.js'

const node = await startRedis()
const a = new Redis({ port: node.port })
const b = new Redis({ port: node.port })
a.on('error', () => {})
b.on('error', () => {})
const locksA = createLocks({ redis: a, ttl: 5_000 })
const locksB = createLocks({ redis: b, ttl: 5_000 })
const lease = await locksA.acquire('r')
await node.restart() // empty data on the same port: the lock is gone
await new Promise((resolve) => setTimeout(resolve, 300))
const other = await locksB.acquire('r', { wait: 2_000 })
console.log(`B acquired with fence ${other.fence} (> A's ${lease.fence}: ${other.fence > lease.fence}); A: held=${lease.held}, aborted=${lease.signal.aborted}`)
const released = await lease.release()
console.log(`A.release() -> ${released}; A's signal aborted afterwards: ${lease.signal.aborted}`)
process.exitCode = !released && !lease.signal.aborted ? 1 : 0
await other.release()
await locksA.close()
await locksB.close()
a.disconnect()
b.disconnect()
await node.stop()
