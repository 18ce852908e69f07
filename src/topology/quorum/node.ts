import type { RedisAdapter } from '../../redis/adapter.js'
import { Alarm, cancelAlarm, setAlarm } from '../../util/alarms.js'
import type { Into } from '../../util/into.js'

/** An alarm this late came due during a stall of this process, not of the node. */
const STALLED_MS = 20
/** The most a stall of this process adds to a call's limit, once: enough for a reply to a call sent just now. */
const GRACE_MS = 50

/** Outcome of one call to one node, bounded by the node timeout. */
export type NodeResult<T> = { ok: true; value: T } | { ok: false; timeout: boolean; error: unknown }

/** A node's call got no reply in time; where its client said why (ECONNREFUSED), the message says it and `cause` holds it. */
export class NodeTimeoutError extends Error {
  constructor(ms: number, clientError?: Error) {
    super(
      `No reply within ${ms} ms${clientError ? ` (the client last reported: ${clientError.message})` : ''}`,
      clientError ? { cause: clientError } : undefined,
    )
    this.name = 'NodeTimeoutError'
  }
}

/**
 * A node's call not sent: its client reported a connection error and has not been ready since
 * (it is reconnecting). Sent, the call would wait in the client's offline queue (node-redis keeps
 * it without bound) holding the lease's records, and reach the node as stale work when it is back.
 */
export class NodeUnreachableError extends Error {
  constructor(clientError: Error) {
    super(`Not sent: the client is reconnecting (it last reported: ${clientError.message})`, { cause: clientError })
    this.name = 'NodeUnreachableError'
  }
}

/**
 * One independent master of a quorum. Besides its client, it remembers the server's run_id: a
 * change means the process restarted (and lost its locks), so the node is left out of quorum
 * counting for `maxTtl` after this client notices. The Lua side reports the server's own uptime
 * too, which covers clients that never saw the node before its restart (see docs/evidence/safety.md).
 */
export class QuorumNode {
  readonly index: number
  readonly redis: RedisAdapter
  #runId: string | undefined
  #excludedUntil = 0

  constructor(index: number, redis: RedisAdapter) {
    this.index = index
    this.redis = redis
  }

  /**
   * `start` sends a call to this node and hands its outcome to `into`; `done` gets that outcome,
   * or a timeout after `ms` (a later outcome is ignored), once. The limit sits on the shared
   * timeline (no Node timer per call: a quorum makes several calls per node and lease), and no
   * promise is made between the node's reply and `done`: the hot path of every quorum operation.
   */
  run<T>(start: (into: Into<T>) => void, ms: number, done: (result: NodeResult<T>) => void): void {
    // A node whose client is reconnecting fails at once: the others decide, as for a timeout.
    const down = this.redis.clientError()
    if (down !== undefined) return done({ ok: false, timeout: false, error: new NodeUnreachableError(down) })
    let settled = false
    // A limit that came due while this process stalled (a GC pause, a long synchronous task) says
    // nothing of the node: its reply may sit unread (Node runs due timers before it reads the
    // sockets), or the call may have gone out only after the stall (a batch). Such a call gets one
    // short grace, and silence is only concluded after a turn of the loop has read the sockets. A
    // reply that comes then counts: whoever reads it measures validity from before the call was sent.
    let graced = false
    const alarm = new Alarm(() => {
      const now = performance.now()
      const late = now - alarm.due
      if (late > STALLED_MS && !graced) {
        graced = true
        return setAlarm(alarm, now + Math.min(ms, late, GRACE_MS), Math.round(ms))
      }
      setImmediate(() => {
        if (settled) return
        settled = true
        done({ ok: false, timeout: true, error: new NodeTimeoutError(ms, this.redis.clientError()) })
      })
    }, true)
    setAlarm(alarm, performance.now() + ms, Math.round(ms))
    const settle = (result: NodeResult<T>): void => {
      if (settled) return
      settled = true
      cancelAlarm(alarm)
      done(result)
    }
    try {
      start({ value: (value) => settle({ ok: true, value }), error: (error) => settle({ ok: false, timeout: false, error }) })
    } catch (error) {
      settle({ ok: false, timeout: false, error })
    }
  }

  /**
   * Records what a node said about itself; returns the ms until it counts towards a quorum (0: now).
   * `young` is the server's own view (maxTtl minus its uptime); a run_id change seen by this client
   * starts a local exclusion window on the monotonic clock, which does not depend on server clocks.
   */
  observe(runId: string, young: number, maxTtl: number): number {
    const now = performance.now()
    if (this.#runId !== undefined && this.#runId !== runId) this.#excludedUntil = now + maxTtl
    this.#runId = runId
    return Math.max(young, this.#excludedUntil - now, 0)
  }
}
