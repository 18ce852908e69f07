import { keyCache } from '../util/keys.js'

/** The options every fencelock primitive's scripts take (createLocks' own, see api/locks.ts). */
export interface KeyedOptions {
  prefix: string
  /** How long the fence keys outlive their last use (ms). */
  fenceRetention: number
  /** How long past its next re-check a queued waiter keeps its place (ms). */
  waiterGrace: number
  /** The label each lease records beside its token (see `HolderInfo`): `createLocks`' `holder`. */
  holder: string
}

/**
 * What the primitives' classes share: a resource's keys, with the lists its scripts take, built
 * once per name (`keys`); the options their scripts take, as strings once (the client would turn
 * numbers into strings on every call); the pub/sub channels a waiter listens on; a lease known by
 * the token its acquire was given (a semaphore's names its slots: it overrides `leaseToken`).
 */
export abstract class KeyedPrimitive<K extends { readonly channels: readonly string[] }> {
  protected readonly keysOf: (name: string) => K
  protected readonly retention: string
  protected readonly grace: string
  protected readonly holder: string

  constructor(options: KeyedOptions, keys: (prefix: string, name: string) => K) {
    this.keysOf = keyCache(options.prefix, keys)
    this.retention = String(options.fenceRetention)
    this.grace = String(options.waiterGrace)
    this.holder = options.holder
  }

  channel(name: string): readonly string[] {
    return this.keysOf(name).channels
  }

  leaseToken(token: string, _claim: string): string {
    return token
  }
}
