// What happens to a key on real servers, from Redis' own keyspace events: a test can tell a key a
// script deleted ("given back") from one whose ttl ran out ("expired"), without timing either.
import { Redis } from 'ioredis'
import type { RedisProcess } from './redis-server.js'

/**
 * Records what happens to `key` on each server from now on (keyspace events: `del` when a script
 * deletes it, `expired` when its ttl ran out), so a test can tell "given back" from "expired".
 */
export async function watchKey(servers: readonly RedisProcess[], key: string): Promise<{ events: string[][]; stop(): Promise<void> }> {
  const events: string[][] = servers.map(() => [])
  const subscribers = await Promise.all(
    servers.map(async (server, i) => {
      const subscriber = new Redis(server.url)
      await subscriber.config('SET', 'notify-keyspace-events', 'Kgx')
      subscriber.on('message', (_channel: string, event: string) => {
        if (event === 'del' || event === 'expired') events[i]!.push(event)
      })
      await subscriber.subscribe(`__keyspace@0__:${key}`)
      return subscriber
    }),
  )
  return { events, stop: async () => void (await Promise.all(subscribers.map((s) => s.quit()))) }
}
