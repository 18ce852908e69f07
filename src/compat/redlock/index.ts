/**
 * `fencelock/redlock`: a drop-in for node-redlock (`redlock` v4 and v5) and
 * `@sesamecare-oss/redlock`. Change the import; the rest of the code stays:
 *
 * ```ts
 * import Redlock from 'fencelock/redlock' // was: from 'redlock'
 * ```
 *
 * `require('fencelock/redlock')` is the class itself, as node-redlock v4's is. The locks keep
 * node-redlock's Redis layout, so old and new processes exclude each other while a fleet moves
 * over; each lock also has a `fence` and a loss `signal`. See docs/migration.md.
 *
 * @packageDocumentation
 * @module fencelock/redlock
 */
import { Redlock } from './redlock.js'

export { Redlock } from './redlock.js'
export { Lock } from './lock.js'
export { ExecutionError, LockError, ResourceLockedError, type ExecutionResult, type ExecutionStats } from './errors.js'
export type { Settings, RedlockAbortSignal, RedlockUsingContext } from './redlock.js'
export default Redlock
