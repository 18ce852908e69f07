// Counting what a real redis-server ran, from INFO commandstats (reset with CONFIG RESETSTAT).
import type { RedisProcess } from './redis-server.js'

/** Script calls (EVALSHA + EVAL) the server has run since the last CONFIG RESETSTAT. */
export async function scriptCalls(redis: RedisProcess): Promise<number> {
  const stats = await redis.cli('INFO', 'commandstats')
  let calls = 0
  for (const m of stats.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+)/gm)) calls += Number(m[2])
  return calls
}
