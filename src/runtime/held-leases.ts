import type { Backend, NoticeSource } from '../topology/backend.js'

/**
 * How long the revocation channel stays listened to after the last lease of a source ended: a
 * process that takes and gives back locks in sequence keeps one subscription, not one per lease.
 */
const NOTICE_LINGER_MS = 2_000

/** What the registry needs of a lease (LeaseState): its token, its backend, and to be told it was revoked. */
export interface HeldLease {
  readonly token: string
  readonly context: { readonly backend: Backend<unknown> }
  revoked(): void
}

/** One source's listening: the held leases that need it, its listener, whether it listens. */
interface Listening {
  held: number
  readonly listener: (message: string) => void
  listening: boolean
  /** Settles once the source's SUBSCRIBE is acknowledged (or failed). */
  subscribed: Promise<unknown>
}

/**
 * The leases one `createLocks` instance holds, and its one subscription to revocation notices
 * (revoke-notice.lua): while any lease is held, the instance listens on its revocation channel on
 * each notice source its leases use (one pub/sub connection, shared by every instance on the
 * client; every node's in quorum mode). A notice names a token: the lease holding it here is lost
 * at once with reason 'revoked'. Leases come and go on the hot path: that costs a counter, no call.
 */
export class HeldLeases<L extends HeldLease = HeldLease> extends Set<L> {
  readonly #channel: string | undefined
  readonly #sources = new Map<NoticeSource, Listening>()
  readonly #retain: (backend: Backend<unknown>) => void
  #linger: NodeJS.Timeout | undefined
  /** After close(): a lease granted late (its reply came after) opens no subscription. */
  #stopped = false

  /** `channel`: where revocations are published (undefined: none are heard, e.g. a drop-in); `retain` keeps the source's connection until close(). */
  constructor(channel: string | undefined, retain: (backend: Backend<unknown>) => void) {
    super()
    this.#channel = channel
    this.#retain = retain
  }

  override add(lease: L): this {
    if (this.has(lease)) return this
    super.add(lease)
    if (this.#channel !== undefined && !this.#stopped) this.#hold(lease.context.backend)
    return this
  }

  override delete(lease: L): boolean {
    if (!super.delete(lease)) return false
    if (this.#channel !== undefined) {
      const entry = this.#sources.get(lease.context.backend.notices)
      if (entry && --entry.held === 0) this.#lingerThenStop()
    }
    return true
  }

  /** Resolves once every source in use listens (tests, and a revoke that must be heard at once). */
  listening(): Promise<void> {
    return Promise.all([...this.#sources.values()].map((entry) => entry.subscribed)).then(() => {})
  }

  /** Stops listening everywhere (locks.close()). */
  stop(): void {
    this.#stopped = true
    clearTimeout(this.#linger)
    for (const [source, entry] of this.#sources) if (entry.listening) source.unlisten(this.#channel!, entry.listener)
    this.#sources.clear()
  }

  #hold(backend: Backend<unknown>): void {
    const source = backend.notices
    let entry = this.#sources.get(source)
    if (!entry) {
      // One listener per source: two sources may share a connection, and each unlistens its own.
      entry = { held: 0, listener: (token) => this.#revoked(token), listening: false, subscribed: Promise.resolve() }
      this.#sources.set(source, entry)
    }
    if (entry.held++ === 0 && !entry.listening) {
      entry.listening = true
      this.#retain(backend)
      // A subscription that fails leaves the leases as they were before revocations existed: a
      // revoked one learns at its next extension (refused). The next lease held tries again.
      const listening = entry
      listening.subscribed = source.listen(this.#channel!, listening.listener).catch(() => {
        source.unlisten(this.#channel!, listening.listener)
        listening.listening = false
      })
    }
  }

  /** One timer for every source: once it fires, the sources no lease needs any more stop listening. */
  #lingerThenStop(): void {
    if (this.#linger) return
    this.#linger = setTimeout(() => {
      this.#linger = undefined
      for (const [source, entry] of this.#sources) {
        if (entry.held > 0) continue
        if (entry.listening) source.unlisten(this.#channel!, entry.listener)
        this.#sources.delete(source)
      }
    }, NOTICE_LINGER_MS)
    this.#linger.unref()
  }

  #revoked(token: string): void {
    for (const lease of this) if (lease.token === token) lease.revoked()
  }
}
