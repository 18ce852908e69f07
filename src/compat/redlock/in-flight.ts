import type { LockInfo } from '../../topology/backend.js'
import { replacingCalls, type Primitive } from '../../topology/primitive.js'
import { promised, type Into } from '../../util/into.js'

/**
 * The redlock primitive, counting its script calls in flight per resource name. node-redlock's
 * acquire settles only after every node answered its last attempt and what that attempt was
 * granted was unlocked again: a failed acquire leaves nothing behind on any node (its own suite
 * checks the nodes right after the error). fencelock's wait ends at its deadline, possibly with an
 * attempt in flight whose grant is undone when its reply comes; `settled` waits for that.
 */
export interface Tracked {
  readonly primitive: Primitive<unknown, LockInfo>
  /** Resolves once no call for `resource` is in flight (calls started meanwhile included), or after `limit` ms. */
  settled(resource: string, limit: number): Promise<void>
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

export function tracked(primitive: Primitive<unknown, LockInfo>): Tracked {
  const inFlight = new Map<string, Set<Promise<unknown>>>()
  const track = <T>(resource: string, work: Promise<T>): Promise<T> => {
    let calls = inFlight.get(resource)
    if (!calls) inFlight.set(resource, (calls = new Set()))
    const set = calls
    set.add(work)
    const done = () => {
      set.delete(work)
      if (set.size === 0 && inFlight.get(resource) === set) inFlight.delete(resource)
    }
    work.then(done, done)
    return work
  }
  /** `send`'s outcome handed to `into`, the call counted as in flight until then. */
  const tracking = <T>(resource: string, into: Into<T>, send: (tracked: Into<T>) => void): void =>
    void track(resource, promised(send)).then(into.value, into.error)
  return {
    primitive: replacingCalls(primitive, {
      acquire: (exec, resource, request, into) => tracking(resource, into, (tracked) => primitive.acquire(exec, resource, request, tracked)),
      release: (exec, resource, token, into) => tracking(resource, into, (tracked) => primitive.release(exec, resource, token, tracked)),
      leave: (exec, resource, waiter) => track(resource, primitive.leave(exec, resource, waiter)),
    }),
    async settled(resource, limit) {
      const end = performance.now() + limit
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, limit)))
      try {
        // A grant's undo starts when the acquire's reply is read: look again a turn later.
        for (let calls = inFlight.get(resource); calls && performance.now() < end; calls = inFlight.get(resource)) {
          await Promise.race([Promise.allSettled([...calls]), late])
          await nextTurn()
        }
      } finally {
        clearTimeout(timer)
      }
    },
  }
}
