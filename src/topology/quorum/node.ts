import type { RedisAdapter } from '../../redis/adapter.js'
import { settleInto, type Into } from '../../util/alarms.js'

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
 * One independent master of a quorum. Besides its client, it remembers the server's run_id: a
 * change means the process restarted (and lost its locks), so the node is left out of quorum
 * counting for `maxTtl` after this client notices. The Lua side reports the server's own uptime
 * too, which covers clients that never saw the node before its restart (see docs/safety.md).
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
   * Runs `call` with a timeout, on the shared timeline (`settleInto`: no Node timer per call, and
   * a quorum makes several calls per node and lease); the call itself is not cancelled (its reply
   * is simply ignored).
   */
  run<T>(call: (redis: RedisAdapter) => Promise<T>, ms: number): Promise<NodeResult<T>> {
    const start = (into: Into<T>): void => {
      let pending: Promise<T>
      try {
        pending = call(this.redis)
      } catch (error) {
        return into.error(error)
      }
      pending.then(into.value, into.error)
    }
    return settleInto<T, NodeResult<T>>(start, ms, Math.round(ms), {
      value: (value) => ({ ok: true, value }),
      error: (error) => ({ ok: false, timeout: false, error }),
      silent: () => ({ ok: false, timeout: true, error: new NodeTimeoutError(ms, this.redis.clientError()) }),
    })
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
