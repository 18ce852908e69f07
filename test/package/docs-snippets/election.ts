// @ts-nocheck: a prelude of test/package/docs-snippets.test.ts, checked with its block in place of "// @snippet"
// Around docs/election.md's API block: the names it uses and leaves to the reader.
import { Redis } from 'ioredis'
import { createLocks } from 'fencelock'

const redis = new Redis(process.env.REDIS_URL!)
const locks = createLocks({ redis })
const signal = AbortSignal.timeout(1_000)
const work = async (fence: number) => fence
// @snippet
await locks.close()
redis.disconnect()
