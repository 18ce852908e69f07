// @ts-nocheck: a prelude of test/package/docs-snippets.test.ts, checked and run with its block in place of "// @snippet"
// Around docs/semaphore.md's blocks, which must give back every permit they take.
import { Redis } from 'ioredis'
import { createLocks } from 'fencelock'

const redis = new Redis(process.env.REDIS_URL!)
const locks = createLocks({ redis })
const renderPdf = async (options: { signal: AbortSignal }) => options.signal.throwIfAborted()
// @snippet
const { held } = await locks.semaphore('pdf-render', { limit: 4 }).inspect()
if (held !== 0) throw new Error(`the semaphore block left ${held} permit(s) held`)
await locks.close()
redis.disconnect()
