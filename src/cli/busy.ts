// Why `run` or `acquire` did not get the lock: who holds it. Read with inspect on this failure path
// only, so the acquire itself makes no extra round trip.
import type { LockTimeoutError, Locks, LocksOptions } from '../index.js'
import type { Hold } from './command.js'
import { Exit, Status, within } from './exit.js'
import { formatTtl, Inspector, permitsHeld, type Holder, type Row } from './inspect.js'

const WHAT: Record<Hold['kind'], string> = { mutex: 'lock', semaphore: 'semaphore', read: 'read/write lock', write: 'read/write lock', election: 'election' }

/** `, holder "<label>"` where Redis records who holds it (the label may hold spaces: quoted), else ''. */
const labelText = (holder: string | null) => (holder !== null ? `, holder ${JSON.stringify(holder)}` : '')

const holderText = (h: Holder) =>
  `token ${h.token} (${h.mode ? `${h.mode}, ` : ''}${h.fence !== null ? `fence ${h.fence}, ` : ''}${formatTtl(h.ttl)} left${labelText(h.holder)})`

function holdersText(row: Row): string {
  const waiting = row.waiters > 0 ? `; ${row.waiters} waiting` : ''
  if (row.holders.length === 0) return `nobody now (released or expired since${waiting})`
  const limit = row.limit !== undefined ? `${permitsHeld(row)} of ${row.limit} permits: ` : ''
  return `${limit}${row.holders.map(holderText).join(', ')}${waiting}`
}

async function heldBy(locks: Locks, options: LocksOptions, hold: Exclude<Hold, { kind: 'election' }>, name: string): Promise<string> {
  const inspector = new Inspector(locks, options)
  try {
    const kind = hold.kind === 'read' || hold.kind === 'write' ? 'read-write' : hold.kind
    return `by ${holdersText(await inspector.row({ kind, name }))}`
  } catch (cause) {
    return `(who holds it could not be read: ${cause instanceof Error ? cause.message : String(cause)})`
  } finally {
    await within(1_000, inspector.close())
  }
}

/** An election is held by its leader: its value, term and remaining ttl. */
async function ledBy(locks: Locks, name: string): Promise<string> {
  try {
    const leader = await locks.election(name).leader()
    return leader
      ? `by the leader ${JSON.stringify(leader.value)} (term ${leader.fence}, ${formatTtl(leader.ttl)} left${labelText(leader.holder)})`
      : 'by nobody now (resigned or expired since)'
  } catch (cause) {
    return `(who leads it could not be read: ${cause instanceof Error ? cause.message : String(cause)})`
  }
}

/**
 * The Exit (status 1) for a lock that `--wait` ran out on: "lock "x" is held by token … (fence …,
 * 9.8s left, holder "…")". If inspect fails too, the message says so and keeps to what is known.
 */
export async function busy(err: LockTimeoutError, hold: Hold, name: string, wait: number | undefined, locks: Locks, options: LocksOptions): Promise<Exit> {
  const what = `${WHAT[hold.kind]} "${name}"`
  const by = hold.kind === 'election' ? await ledBy(locks, name) : await heldBy(locks, options, hold, name)
  const message =
    wait === 0
      ? `${what} is held ${by}; not acquired (--wait 0 makes one attempt; give --wait to wait for it)`
      : `${what} is still held after waiting ${Math.round(err.waited)} ms, ${by}; not acquired (a longer --wait waits longer)`
  return new Exit(Status.NO, message, { cause: err })
}
