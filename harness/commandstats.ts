// Counting what a real redis-server ran, from INFO commandstats (reset with CONFIG RESETSTAT).
import type { RedisProcess } from './redis-server.js'
import { sleep } from './util.js'

/** Several commands' call counts from ONE `INFO commandstats` (work may go on between two reads). */
export async function callsOfAll(redis: RedisProcess, commands: readonly string[]): Promise<number[]> {
  const info = await redis.cli('INFO', 'commandstats')
  return commands.map((command) => Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0))
}

/** Script calls (EVALSHA + EVAL) the server has run since the last CONFIG RESETSTAT. */
export async function scriptCalls(redis: RedisProcess): Promise<number> {
  const [evalsha, evals] = await callsOfAll(redis, ['evalsha', 'eval'])
  return evalsha! + evals!
}

/**
 * Resets the server's stats, waits `ms`, and returns the script calls it ran meanwhile with the
 * time that took (from the reset to the count), for "at most one call per batch per period".
 */
export async function scriptCallsOver(redis: RedisProcess, ms: number): Promise<{ calls: number; elapsed: number }> {
  await redis.cli('CONFIG', 'RESETSTAT')
  const since = performance.now()
  await sleep(ms)
  const calls = await scriptCalls(redis)
  return { calls, elapsed: performance.now() - since }
}
