import * as embedded from './embedded.js'

/** A Lua script with its SHA1 computed once at build time and the number of KEYS it declares. */
export interface LuaScript {
  readonly name: string
  readonly sha: string
  readonly source: string
  readonly keys: number
  /** Takes further keys after the `keys` fixed ones (`KEYS[n..]` in its header), e.g. a semaphore's slots. */
  readonly variadic: boolean
}

const define = (script: { name: string; sha: string; source: string }, keys: number, variadic = false): LuaScript => ({ ...script, keys, variadic })

export const scripts = {
  mutexAcquire: define(embedded.mutexAcquire, 4),
  mutexRelease: define(embedded.mutexRelease, 3),
  mutexExtend: define(embedded.mutexExtend, 1),
  mutexExtendMany: define(embedded.mutexExtendMany, 1, true),
  mutexLeave: define(embedded.mutexLeave, 3),
  mutexInspect: define(embedded.mutexInspect, 4),
  fencedSet: define(embedded.fencedSet, 2),
  fenceClaim: define(embedded.fenceClaim, 1),
  quorumAcquire: define(embedded.quorumAcquire, 4),
  quorumCommit: define(embedded.quorumCommit, 4),
  semaphoreAcquire: define(embedded.semaphoreAcquire, 4, true),
  semaphoreRelease: define(embedded.semaphoreRelease, 3, true),
  semaphoreExtend: define(embedded.semaphoreExtend, 2),
  semaphoreExtendMany: define(embedded.semaphoreExtendMany, 2, true),
  semaphoreLeave: define(embedded.semaphoreLeave, 2, true),
  semaphoreInspect: define(embedded.semaphoreInspect, 4, true),
  rwAcquire: define(embedded.rwAcquire, 5),
  rwRelease: define(embedded.rwRelease, 4),
  rwExtend: define(embedded.rwExtend, 2),
  rwExtendMany: define(embedded.rwExtendMany, 2, true),
  rwLeave: define(embedded.rwLeave, 4),
  rwCommit: define(embedded.rwCommit, 5),
  rwInspect: define(embedded.rwInspect, 5),
  multiAcquire: define(embedded.multiAcquire, 4, true),
  multiRelease: define(embedded.multiRelease, 3, true),
  multiExtendMany: define(embedded.multiExtendMany, 1, true),
  multiExtend: define(embedded.multiExtend, 1, true),
  multiLeave: define(embedded.multiLeave, 3, true),
  multiCommit: define(embedded.multiCommit, 4, true),
} as const satisfies Record<string, LuaScript>
