// The Redis clients a benchmark worker process opens for its current task, closed together when
// the task is done.
import { Redis } from 'ioredis'

const clients: Redis[] = []

export async function connect(urls: string[]): Promise<Redis[]> {
  const made = urls.map((url) => new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 }))
  await Promise.all(made.map((c) => c.connect()))
  clients.push(...made)
  return made
}

export async function closeClients(): Promise<void> {
  const all = clients.splice(0)
  await Promise.all(all.map((c) => c.quit().catch(() => c.disconnect())))
}
