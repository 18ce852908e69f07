// Minimal typings for the two peer packages whose own types cannot be resolved under NodeNext:
// node-redlock 4.2 ships no types, and 5.0-beta's `exports` map hides its `index.d.ts`.
// Only what the benchmark calls is declared.

declare module 'redlock' {
  import type { Redis } from 'ioredis'

  namespace Redlock4 {
    interface Options {
      driftFactor?: number
      retryCount?: number
      retryDelay?: number
      retryJitter?: number
    }
    interface Lock {
      readonly resource: string[]
      readonly value: string
      unlock(): Promise<void>
    }
  }
  class Redlock4 {
    constructor(clients: Redis[], options?: Redlock4.Options)
    lock(resource: string, ttl: number): Promise<Redlock4.Lock>
    on(event: 'clientError', listener: (err: Error) => void): this
  }
  export = Redlock4
}

declare module 'redlock5' {
  import type { Redis } from 'ioredis'

  export interface Settings {
    readonly driftFactor: number
    readonly retryCount: number
    readonly retryDelay: number
    readonly retryJitter: number
    readonly automaticExtensionThreshold: number
  }
  export class Lock {
    release(): Promise<unknown>
  }
  /** Aborted when an automatic extension fails; `error` says why. */
  export type RedlockAbortSignal = AbortSignal & { error?: Error }
  export default class Redlock {
    constructor(clients: Iterable<Redis>, settings?: Partial<Settings>)
    acquire(resources: string[], duration: number, settings?: Partial<Settings>): Promise<Lock>
    /** Acquires, runs `routine`, extending the lock automatically until it settles, then releases. */
    using<T>(resources: string[], duration: number, routine: (signal: RedlockAbortSignal) => Promise<T>): Promise<T>
    on(event: 'error', listener: (err: Error) => void): this
  }
}
