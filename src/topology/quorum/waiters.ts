/**
 * What the quorum backend keeps about this process's waiters, so that every node sees the same
 * queue order and no wake-up is lost between nodes.
 */
export class WaiterBook {
  // A waiter's queue score is fixed at its first attempt and sent to every node, so all nodes
  // order the waiters alike (server-side arrival times differ per node and would split the vote).
  // It estimates the servers' time (µs): the latest server TIME seen plus the monotonic time since,
  // so no client wall clock is involved. Before any reply it is '' (each node uses its own time).
  // It only orders waiters: an estimate that is off costs fairness, never safety.
  readonly #scores = new Map<string, string>()
  #serverUs = 0
  #seenAt = 0
  #tie = 0
  // Per resource, the waiters of this process that are queued in Redis. Only the first of them
  // (the head of this process's local queue) keeps talking to Redis; a later one whose first
  // attempt failed may still hold a lower score there (replies from several nodes return in any
  // order), and would stand at the head in Redis while its owner waits behind the local head.
  readonly #queued = new Map<string, Set<string>>()
  // When each waiter was last woken. A release publishes on each node as it happens there; one
  // that lands while an attempt still waits for its slowest node finds no sleeping waiter to wake,
  // and the attempt (which saw the lock held on some node) would then sleep for the holder's ttl.
  readonly #heard = new Map<string, number>()

  sawServerTime(us: number): void {
    const now = performance.now()
    if (us > this.#serverUs + (now - this.#seenAt) * 1000) {
      this.#serverUs = us
      this.#seenAt = now
    }
  }

  /** True once a server TIME was seen: from then on every waiter gets a score (see `scoreOf`). */
  knowsServerTime(): boolean {
    return this.#serverUs !== 0
  }

  scoreOf(waiter: string): string {
    if (waiter === '') return ''
    let score = this.#scores.get(waiter)
    if (score === undefined) {
      if (this.#serverUs === 0) return ''
      if (this.#scores.size >= 10_000) this.#scores.delete(this.#scores.keys().next().value!)
      score = String(Math.floor(this.#serverUs + (performance.now() - this.#seenAt) * 1000) + (this.#tie++ % 1000))
      this.#scores.set(waiter, score)
    }
    return score
  }

  /** A wake-up for `waiter` was delivered (by a majority of nodes). */
  woke(waiter: string): void {
    if (this.#heard.size >= 10_000) this.#heard.clear()
    this.#heard.set(waiter, performance.now())
  }

  /** True if `waiter` was woken after `since`: its failed attempt should be retried at once. */
  wokenSince(waiter: string, since: number): boolean {
    const at = this.#heard.get(waiter)
    this.#heard.delete(waiter)
    return at !== undefined && at >= since
  }

  /**
   * `waiter`'s attempt failed and left it queued in Redis. Returns false if another waiter of this
   * process is queued already: this one waits behind it locally, so it must give up its place in
   * Redis (and takes a fresh score when its turn comes).
   */
  queue(resource: string, waiter: string): boolean {
    const set = this.#queued.get(resource) ?? new Set<string>()
    this.#queued.set(resource, set)
    if (set.size > 0 && !set.has(waiter)) {
      this.#scores.delete(waiter)
      return false
    }
    set.add(waiter)
    return true
  }

  /** `waiter` got the lock or gave up. */
  done(resource: string, waiter: string): void {
    this.#scores.delete(waiter)
    this.#heard.delete(waiter)
    const set = this.#queued.get(resource)
    if (set?.delete(waiter) && set.size === 0) this.#queued.delete(resource)
  }
}
