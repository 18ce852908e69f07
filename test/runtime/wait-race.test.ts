// The waiting scheduler (src/runtime/wait.ts) on its own, with its inputs (attempt replies, the SUBSCRIBE
// acknowledgement, a resync, a release message) delivered in an order the test chooses. Real Redis
// delivers them in this order only by chance (a pub/sub reconnect while SUBSCRIBE is in flight);
// here the interleaving is fixed, so the test fails every time the race is there.
import { describe, expect, it } from 'vitest'
import type { LeaseState as Lease } from '../../src/runtime/lease-state.js'
import { WaitQueues, type TryResult, type Waiter } from '../../src/runtime/wait.js'

interface Deferred<T> {
  promise: Promise<T>
  resolve(value: T): void
}
const deferred = <T>(): Deferred<T> => {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}
const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms))

function scheduler() {
  const attempts: Deferred<TryResult>[] = []
  const subscriptions: Deferred<number>[] = []
  const listeners = new Map<string, (message: string) => void>()
  let resync: (() => void) | undefined
  const queues = new WaitQueues({
    wake: {
      retain() {},
      release: async () => {},
      listen(channel, listener) {
        listeners.set(channel, listener)
        const ack = deferred<number>()
        subscriptions.push(ack)
        return ack.promise
      },
      unlisten(channel) {
        listeners.delete(channel)
      },
      onResync(listener) {
        resync = listener
        return () => (resync = undefined)
      },
    },
    subscribing() {},
    listened: { ever: false },
    channels: (resource) => [`ch:${resource}`],
    attempt() {
      const reply = deferred<TryResult>()
      attempts.push(reply)
      return reply.promise
    },
    leave() {},
    checkOpen() {},
    grace: 100,
  })
  return { queues, attempts, subscriptions, listeners, resync: () => resync?.() }
}

function waiter(id: string, resource: string): { waiter: Waiter; outcome: Promise<unknown> } {
  let resolve!: (lease: Lease) => void
  let reject!: (err: unknown) => void
  const outcome = new Promise<unknown>((res, rej) => {
    resolve = res
    reject = rej
  })
  const w: Waiter = {
    id,
    resource,
    ttl: 10_000,
    started: performance.now(),
    deadline: performance.now() + 20_000,
    signal: undefined,
    queued: false,
    settled: false,
    lastError: undefined,
    failures: 0,
    retryToken: undefined,
    standby: undefined,
    resolve,
    reject,
    wake: undefined,
    woken: undefined,
    timers: [],
    unlistenAbort: undefined,
  }
  return { waiter: w, outcome }
}

describe('wait scheduler', () => {
  it('a waiter woken while its SUBSCRIBE is unanswered still hears the release after the acknowledgement lands during its sleep', async () => {
    const s = scheduler()
    const { waiter: w, outcome } = waiter('p:1', 'r')
    s.queues.enqueue(w)
    await tick()
    expect(s.attempts).toHaveLength(1)
    s.attempts[0]!.resolve({ retry: 10_000 }) // held by someone else for 10 s
    await tick()
    expect(s.subscriptions).toHaveLength(1) // SUBSCRIBE sent, not yet acknowledged
    s.resync() // the pub/sub connection came back: every head looks again
    await tick()
    expect(s.attempts).toHaveLength(2)
    s.attempts[1]!.resolve({ retry: 10_000 }) // still held: the waiter goes to sleep until the re-check
    await tick()
    s.subscriptions[0]!.resolve(performance.now()) // the late acknowledgement
    await tick()
    s.listeners.get('ch:r')!('p:1') // the holder releases and names this waiter
    await tick(20)
    // The release must wake it at once, not after the 10 s re-check.
    expect(s.attempts, 'attempts made after the release message').toHaveLength(3)
    const lease = { release: async () => true } as unknown as Lease
    s.attempts[2]!.resolve({ lease })
    await expect(outcome).resolves.toBe(lease)
  })
})
