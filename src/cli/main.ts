#!/usr/bin/env node
// The `fencelock` command. It uses only the public API, with ioredis or node-redis as the client.
import { createLocks, LockAbortedError, LockTimeoutError, type AcquireOptions, type Lease, type Locks, type LocksOptions } from '../index.js'
import { parseCommandLine, UsageError } from './args.js'
import type { Command, Hold } from './command.js'
import { busy } from './busy.js'
import { useColor } from './color.js'
import { connect, type Connected } from './connect.js'
import { Exit, log, print, Status, statusOf, within } from './exit.js'
import { forceRelease, forceReleaseAll, releaseToken } from './force-release.js'
import type { Kind } from './scan.js'
import { describeLock, exists, formatTable, Inspector, mutexRow } from './inspect.js'
import { showLeader } from './leader.js'
import { runHolding, signalExit } from './run.js'
import { packageVersion } from './version.js'
import { watch } from './watch.js'

type Connecting = Exclude<Command, { name: 'help' | 'version' }>

/**
 * The lease `run` or `acquire` asks for; SIGINT/SIGTERM/SIGHUP while waiting give up the wait
 * cleanly, and a lock still held when the wait ends is an Exit(1) that says who holds it.
 */
async function acquire(locks: Locks, locksOptions: LocksOptions, resource: string, hold: Hold, options: AcquireOptions): Promise<Lease> {
  const controller = new AbortController()
  const onSignal = (signal: NodeJS.Signals) => controller.abort(signal)
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
  for (const signal of signals) process.on(signal, onSignal)
  const withSignal = { ...options, signal: controller.signal }
  try {
    switch (hold.kind) {
      case 'mutex':
        return await locks.acquire(resource, withSignal)
      case 'semaphore':
        return await locks.semaphore(resource, { limit: hold.limit }).acquire(withSignal)
      case 'read':
        return await locks.readWrite(resource).read(withSignal)
      case 'write':
        return await locks.readWrite(resource).write(withSignal)
      case 'election': {
        // A term is always extended while it leads: a campaign takes no autoExtend.
        const { autoExtend: _always, ...campaign } = withSignal
        return await locks.election(resource).campaign(hold.value, campaign)
      }
    }
    return hold satisfies never
  } catch (err) {
    if (err instanceof LockTimeoutError) throw await busy(err, hold, resource, options.wait, locks, locksOptions)
    if (!(err instanceof LockAbortedError)) throw err
    const signal = controller.signal.reason as NodeJS.Signals
    throw new Exit(signalExit(signal), `${signal} while waiting for lock "${resource}"; gave up`)
  } finally {
    for (const signal of signals) process.off(signal, onSignal)
  }
}

const options = (ttl: number | undefined, wait: number | undefined): AcquireOptions => ({
  ...(ttl !== undefined && { ttl }),
  ...(wait !== undefined && { wait }),
})

/**
 * `inspect <name>`: the mutex (one line, as earlier versions printed it); where it is free, also
 * whatever else Redis keeps under that name (an election's leader, a semaphore, a read/write lock).
 */
async function exactSnapshot(name: string, json: boolean, color: boolean, locks: Locks, inspector: Inspector): Promise<string> {
  const info = await locks.inspect(name)
  const others = info.held || info.waiters > 0 ? [] : await inspector.others(name)
  if (others.length === 0) return json ? JSON.stringify(info) : describeLock(info)
  const rows = [...(exists(mutexRow(info)) ? [mutexRow(info)] : []), ...others]
  return json ? JSON.stringify(rows.length === 1 ? rows[0] : rows) : formatTable(rows, color)
}

async function inspect(command: Extract<Command, { name: 'inspect' }>, locks: Locks, locksOptions: LocksOptions, connected: Connected): Promise<number> {
  const color = useColor(process.env, process.stdout.isTTY === true)
  const inspector = new Inspector(locks, locksOptions)
  const prefix = command.connection.prefix ?? 'fencelock:'
  const snapshot = async (): Promise<string> => {
    if (command.resource !== undefined && command.kind !== 'mutex') {
      const row = await inspector.row({ kind: command.kind, name: command.resource })
      return command.json ? JSON.stringify(row) : formatTable([row], color)
    }
    if (command.resource !== undefined) return exactSnapshot(command.resource, command.json, color, locks, inspector)
    const rows = await inspector.rows(await connected.scanNodes(), prefix, command.pattern, command.all)
    return command.json ? JSON.stringify(rows) : formatTable(rows, color)
  }
  try {
    if (!command.watch) {
      print(await snapshot())
      return 0
    }
    return await watch(snapshot, {
      interval: command.interval,
      tty: process.stdout.isTTY === true,
      color,
      title: `fencelock inspect${(command.resource ?? command.pattern) ? ` ${command.resource ?? command.pattern}` : ''}`,
      write: (text) => void process.stdout.write(text),
      onError: (err) => log(err instanceof Error ? err.message : String(err)),
    })
  } finally {
    await within(1_000, inspector.close())
  }
}

async function execute(command: Connecting, locks: Locks, locksOptions: LocksOptions, connected: Connected): Promise<number> {
  switch (command.name) {
    case 'inspect':
      return inspect(command, locks, locksOptions, connected)
    case 'acquire': {
      // Not extended and not released: the lock lives for its ttl, for whoever uses the fence.
      const lease = await acquire(locks, locksOptions, command.resource, { kind: 'mutex' }, options(command.ttl, command.wait))
      const { resource, token, fence, ttl } = lease
      print(command.json ? JSON.stringify({ resource, token, fence, ttl }) : `token=${token} fence=${fence} ttl=${ttl}`)
      return 0
    }
    case 'release': {
      const force = { yes: command.yes, log, print }
      if (command.force && command.kind === 'mutex') return forceRelease(locks, command.resource, force)
      const inspector = new Inspector(locks, locksOptions)
      try {
        if (command.force) return await forceReleaseAll(locks, inspector, command.kind as Exclude<Kind, 'mutex'>, command.resource, force)
        const released = await releaseToken(locks, inspector, command.kind, command.resource, command.token!)
        const what = command.kind === 'mutex' ? 'lock' : command.kind === 'semaphore' ? 'semaphore' : 'read/write lock'
        if (!released) log(`${what} "${command.resource}" is not held by that token (expired, released, or taken over); nothing changed`)
        return released ? Status.OK : Status.NO
      } finally {
        await within(1_000, inspector.close())
      }
    }
    case 'leader':
      return showLeader(locks.election(command.election), command)
    case 'extend': {
      const extended = await locks.extend(command.resource, command.token, command.ttl)
      if (!extended) log(`lock "${command.resource}" is not held by that token (expired, released, or taken over); nothing changed`)
      return extended ? Status.OK : Status.NO
    }
    case 'run': {
      const lease = await acquire(locks, locksOptions, command.resource, command.hold, { ...options(command.ttl, command.wait), autoExtend: true })
      const code = await runHolding(lease, command.command, log)
      if (!lease.signal.aborted) {
        await lease.release().catch((err: Error) => log(`${err.message}; it expires within its ttl`))
      }
      return code
    }
  }
}

async function main(argv: string[]): Promise<number> {
  let command: Command
  try {
    command = parseCommandLine(argv, process.env, { version: packageVersion() })
    // Checked before connecting: nobody could answer the question.
    if (command.name === 'release' && command.force && !command.yes && !process.stdin.isTTY) {
      throw new UsageError(
        'release --force: stdin is not a terminal, so fencelock cannot ask before removing the holder; add --yes to remove it without asking',
      )
    }
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    log(err.message)
    log('see `fencelock --help` (or `fencelock <command> --help`) for usage')
    return Status.USAGE
  }
  if (command.name === 'help') {
    process.stdout.write(command.text)
    return 0
  }
  if (command.name === 'version') {
    print(packageVersion())
    return 0
  }

  const connected = await connect(command.connection)
  try {
    const { prefix, maxTtl } = command.connection
    const locksOptions: LocksOptions = { redis: connected.redis, ...(prefix !== undefined && { prefix }), ...(maxTtl !== undefined && { maxTtl }) }
    const locks = createLocks(locksOptions)
    try {
      return await execute(command, locks, locksOptions, connected)
    } finally {
      await within(1_000, locks.close())
    }
  } finally {
    await connected.close()
  }
}

function exit(code: number): void {
  process.exitCode = code
  // Everything is closed by now; if some handle still lingers, do not hang on it.
  setTimeout(() => process.exit(code), 1_000).unref()
}

main(process.argv.slice(2)).then(exit, (err: unknown) => {
  const status = statusOf(err)
  const message = err instanceof Error ? err.message : String(err)
  log(status === Status.SOFTWARE ? `unexpected error (please report it): ${err instanceof Error ? (err.stack ?? message) : message}` : message)
  exit(status)
})
