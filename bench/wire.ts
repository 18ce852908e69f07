// Counts the commands a process really sends to Redis ("wire commands"). INFO commandstats cannot
// tell them apart: it also counts every redis.call() made inside a Lua script. So every ioredis
// connection of a benchmark process is counted at `sendCommand`, except the ones marked with
// `uncounted()` (the critical section's own GET/SET of the counter).
import { Redis } from 'ioredis'

const SKIP = Symbol('fencelock.bench.uncounted')
type Counted = Redis & { [SKIP]?: true }
type SendCommand = (this: Counted, ...args: unknown[]) => unknown

let sent = 0
let received = 0
let installed = false
/** Per command name, for finding where commands come from (read with `wireByName()`). */
const byName = new Map<string, number>()

export function installWireCounter(): void {
  if (installed) return
  installed = true
  const proto = Redis.prototype as unknown as { sendCommand: SendCommand }
  const original = proto.sendCommand
  proto.sendCommand = function (this: Counted, ...args: unknown[]) {
    // A command issued before the connection is up waits in the offline queue and passes through
    // here again once connected: count it only when it is really written.
    if (this[SKIP] !== true && (this.status === 'ready' || this.status === 'connect')) {
      sent++
      const name = (args[0] as { name?: string } | undefined)?.name ?? '?'
      byName.set(name, (byName.get(name) ?? 0) + 1)
    }
    return original.apply(this, args)
  }
  // Pub/sub messages delivered to this process: a broadcast wake-up costs every subscriber a read.
  const emitter = Redis.prototype as unknown as { emit: (this: Redis, event: string | symbol, ...args: unknown[]) => boolean }
  const emit = emitter.emit
  emitter.emit = function (this: Redis, event: string | symbol, ...args: unknown[]) {
    // ioredis emits 'message' and 'messageBuffer' for one delivery: count one of them.
    if (event === 'message' || event === 'smessage') received++
    return emit.call(this, event, ...args)
  }
}

/** Pub/sub messages received by this process's ioredis connections. */
export const messagesReceived = (): number => received

export const wireCount = (): number => sent

export const wireByName = (): Record<string, number> => Object.fromEntries(byName)

export function uncounted(client: Redis): Redis {
  ;(client as Counted)[SKIP] = true
  return client
}
