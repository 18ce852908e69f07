// @ts-nocheck: a prelude of test/package/docs-snippets.test.ts, checked and run with its block in place of "// @snippet"
// Around docs/read-write.md's block, which must give back every lease it takes.
import { Redis } from 'ioredis'
import { createLocks } from 'fencelock'

const redis = new Redis(process.env.REDIS_URL!)
const locks = createLocks({ redis })
const loadPrices = async () => [{ sku: 'a', cents: 100 }]
const savePrices = async (fence: number) => void fence
// @snippet
const { writer, readers } = await locks.readWrite('price-table').inspect()
if (writer || readers.length) throw new Error(`the read/write block left ${JSON.stringify({ writer, readers })} held`)
await locks.close()
redis.disconnect()
