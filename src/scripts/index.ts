import * as embedded from './embedded.js'

/** A Lua script with its SHA1 computed once at build time and the number of KEYS it declares. */
export interface LuaScript {
  readonly name: string
  readonly sha: string
  readonly source: string
  readonly keys: number
}

const define = (script: { name: string; sha: string; source: string }, keys: number): LuaScript => ({ ...script, keys })

export const scripts = {
  mutexAcquire: define(embedded.mutexAcquire, 4),
  mutexRelease: define(embedded.mutexRelease, 3),
  mutexExtend: define(embedded.mutexExtend, 1),
  mutexLeave: define(embedded.mutexLeave, 3),
  mutexInspect: define(embedded.mutexInspect, 4),
  fencedSet: define(embedded.fencedSet, 2),
  fenceClaim: define(embedded.fenceClaim, 1),
  quorumAcquire: define(embedded.quorumAcquire, 4),
  quorumCommit: define(embedded.quorumCommit, 4),
} as const satisfies Record<string, LuaScript>
