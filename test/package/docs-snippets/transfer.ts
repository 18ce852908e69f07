// @ts-nocheck: a prelude of test/package/docs-snippets.test.ts, checked and run with its block in place of "// @snippet"
// Around docs/all-or-nothing.md's transfer blocks: a client of the test's Redis, an instance, two accounts.
import { Redis } from 'ioredis'
import { claimFence, createLocks, fencedSet } from 'fencelock'

const redis = new Redis(process.env.REDIS_URL!)
const locks = createLocks({ redis })
const from = 'alice'
const to = 'bob'
const amount = 10
const key = (account: string) => `balance:${account}`
// @snippet
await locks.close()
redis.disconnect()
