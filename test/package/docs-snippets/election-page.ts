// @ts-nocheck: a prelude of test/package/docs-snippets.test.ts, checked with its block in place of "// @snippet"
// Around docs/election.md's first block: the client and the work it leaves to the reader.
import { Redis } from 'ioredis'

const redis = new Redis(process.env.REDIS_URL!)
const signal = AbortSignal.timeout(1_000)
const runOneRound = async (options: { signal: AbortSignal }) => options.signal.throwIfAborted()
// @snippet
redis.disconnect()
