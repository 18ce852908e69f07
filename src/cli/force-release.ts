// `fencelock release <resource> --force`: removes a holder whose token the operator does not have,
// through the library's revoke of the token inspect read: the ordinary compare-and-delete release
// (the next waiter is woken, a holder that changed in between is left alone), then a notice that
// the holder's process hears at once (its lease's signal aborts with reason 'revoked').
import { createInterface } from 'node:readline/promises'
import type { Locks } from '../index.js'
import { formatTtl, type Inspector, type Row } from './inspect.js'
import type { Kind } from './scan.js'

export interface ForceOptions {
  /** Remove without asking (--yes). */
  readonly yes: boolean
  readonly log: (line: string) => void
  readonly print: (line: string) => void
}

/** Asks `question` on the terminal (stdin/stderr); true for y or yes. */
async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true })
  try {
    const answer = await rl.question(question)
    return /^y(es)?$/i.test(answer.trim())
  } finally {
    rl.close()
  }
}

/**
 * Reads the holder of `resource` and releases it with its token. Resolves with the exit code:
 * 0 removed; 1 not held, not confirmed, or no longer held by that token when the release ran.
 */
export async function forceRelease(locks: Locks, resource: string, options: ForceOptions): Promise<number> {
  const info = await locks.inspect(resource)
  if (!info.held || info.token === null) {
    options.log(`lock "${resource}" is not held (last fence ${info.fence ?? 'none'}, ${info.waiters} waiting); nothing to remove`)
    return 1
  }
  const label = info.holder === null ? '' : `holder "${info.holder}", `
  const holder = `${label}token ${info.token} (fence ${info.fence ?? 'none'}, ${info.ttl ?? 0} ms left)`
  if (!options.yes && !(await confirm(`Remove the lock held by ${holder}? [y/N] `))) {
    options.log(`not removed: lock "${resource}" is still held by token ${info.token}`)
    return 1
  }
  if ((await locks.revoke(resource, info.token)).length === 0) {
    options.log(
      `not removed: lock "${resource}" is no longer held by token ${info.token} (it expired, was released, or another holder took it since it was read); run the command again to see the current holder`,
    )
    return 1
  }
  options.print(
    `removed the holder of "${resource}": token ${info.token}, fence ${info.fence ?? 'none'}, ${formatTtl(info.ttl ?? 0)} (${info.ttl ?? 0} ms) left; its process is told (its lease is lost, reason revoked)`,
  )
  return 0
}

const KIND_NAME: Record<Kind, string> = { mutex: 'lock', semaphore: 'semaphore', 'read-write': 'read/write lock' }

/** Releases the holder of `token` on `resource` of `kind`, through the library's release by token. */
export async function releaseToken(locks: Locks, inspector: Inspector, kind: Kind, resource: string, token: string): Promise<boolean> {
  if (kind === 'mutex') return locks.release(resource, token)
  if (kind === 'read-write') return locks.readWrite(resource).release(token)
  // A semaphore handle needs the limit its permits were taken under (stored while any is held).
  const row = await inspector.row({ kind, name: resource })
  return row.limit === undefined ? false : inspector.semaphore(resource, row.limit).release(token)
}

/**
 * `release --force` of a semaphore or read/write lock: every holder inspect reads (the permits; the
 * writer or the readers), after one confirmation, each through the release by token. Resolves with
 * the exit code: 0 all removed; 1 none held, not confirmed, or some holder changed meanwhile.
 */
export async function forceReleaseAll(
  locks: Locks,
  inspector: Inspector,
  kind: Exclude<Kind, 'mutex'>,
  resource: string,
  options: ForceOptions,
): Promise<number> {
  const row: Row = await inspector.row({ kind, name: resource })
  const what = `${KIND_NAME[kind]} "${resource}"`
  if (row.holders.length === 0) {
    options.log(`${what} is not held (last fence ${row.fence ?? 'none'}, ${row.waiters} waiting); nothing to remove`)
    return 1
  }
  const list = row.holders
    .map((h) => `${h.holder ? `holder "${h.holder}", ` : ''}token ${h.token}${h.mode ? ` (${h.mode}, ` : ' ('}${h.ttl} ms left)`)
    .join(', ')
  if (!options.yes && !(await confirm(`Remove the ${row.holders.length} holder(s) of ${what}: ${list}? [y/N] `))) {
    options.log(`not removed: ${what} is still held`)
    return 1
  }
  let code = 0
  for (const holder of row.holders) {
    const handle = kind === 'semaphore' ? inspector.semaphore(resource, row.limit!) : locks.readWrite(resource)
    const removed = (await handle.revoke(holder.token)).length > 0
    if (removed)
      options.print(
        `removed a holder of ${what}: token ${holder.token}${holder.mode ? ` (${holder.mode})` : ''}, ${formatTtl(holder.ttl)} (${holder.ttl} ms) left`,
      )
    else {
      options.log(`not removed: token ${holder.token} no longer holds ${what} (it expired or was released since it was read)`)
      code = 1
    }
  }
  return code
}
