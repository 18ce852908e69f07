// How long the CLI waits for a Redis that takes connections but may not answer (paused, overloaded):
// every wait on the client outside the library's own bounded calls has a deadline of its own.
import { RedisError } from '../index.js'
import { answerWithin, Exit, Status, within } from './exit.js'
import { redact } from './values.js'

// The whole connect, TCP and handshake: the clients' connectTimeout covers only the TCP part, and a
// paused Redis gets its connections accepted by the kernel but answers nothing.
export const CONNECT_TIMEOUT_MS = 5_000
// The clients' own TCP timeout, later: the whole connect's deadline speaks first, in its words.
export const TCP_TIMEOUT_MS = CONNECT_TIMEOUT_MS + 1_000
/** ioredis asks one seed after another for the slots, each for at most this long. */
export const SLOTS_TIMEOUT_MS = 2_000
/** How long one SCAN step (and a cluster node's connection for it) may take before inspect gives up. */
export const SCAN_TIMEOUT_MS = 5_000

interface Connectable {
  connect(): Promise<unknown>
  once(event: 'connect', listener: () => void): unknown
}

/**
 * `client.connect()` (which settles once the handshake is answered), or Exit(69) after
 * CONNECT_TIMEOUT_MS; one node's client tells whether Redis took the connection at all (a
 * cluster client's 'connect' comes only after the slots are read). `abandon` ends the attempt.
 */
export async function handshake(url: string, client: Connectable, abandon: () => unknown, kind: 'node' | 'cluster' = 'node'): Promise<void> {
  let accepted = false
  if (kind === 'node') client.once('connect', () => void (accepted = true))
  const why = () =>
    kind === 'cluster'
      ? 'no reply from this cluster seed (Redis paused or overloaded, or a firewall?)'
      : accepted
        ? 'the connection was accepted but no reply came (Redis paused or overloaded?)'
        : 'no connection was established (a wrong address, a firewall, or a paused server behind TLS?)'
  const silent = () => new Exit(Status.UNAVAILABLE, `Redis at ${redact(url)} did not answer within ${CONNECT_TIMEOUT_MS} ms: ${why()}`)
  try {
    await answerWithin(CONNECT_TIMEOUT_MS, client.connect(), silent)
  } catch (err) {
    await within(1_000, Promise.resolve().then(abandon))
    throw err
  }
}

/** A SCAN step, or a RedisError once SCAN_TIMEOUT_MS pass (inspect --watch reports it and goes on). */
export const scanWithin = <T>(url: string, promise: Promise<T>): Promise<T> =>
  answerWithin(
    SCAN_TIMEOUT_MS,
    promise,
    () => new RedisError(`Redis did not answer the SCAN of ${redact(url)} within ${SCAN_TIMEOUT_MS} ms (paused, overloaded, or unreachable)`),
  ).catch((err: unknown) => {
    throw err instanceof RedisError ? err : new RedisError(`SCAN of ${redact(url)} failed: ${(err as Error)?.message ?? String(err)}`, { cause: err })
  })
