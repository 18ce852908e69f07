#!/usr/bin/env node
// The `fencelock` command. It uses only the public API, with ioredis as the client.
import type { Redis as IORedis } from 'ioredis'
import pkg from '../../package.json' with { type: 'json' }
import { createLocks, InvalidArgumentError, LockAbortedError, LockTimeoutError, type AcquireOptions, type Lease, type LockInfo, type Locks } from '../index.js'
import { parseCommandLine, USAGE, UsageError, type Command } from './args.js'
import { runHolding, signalExit } from './run.js'

/** Ends the CLI with `code` after printing `message` to stderr. */
class Exit extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message)
  }
}

const log = (line: string) => void process.stderr.write(`fencelock: ${line}\n`)
const print = (line: string) => void process.stdout.write(`${line}\n`)

/** Never a password in a message. */
function redact(url: string): string {
  const parsed = new URL(url)
  if (parsed.password) parsed.password = '***'
  return parsed.toString()
}

// A variable, not a literal: bundlers would otherwise copy ioredis into dist/cli.js, and a missing
// ioredis must be reported, not crash on import.
const IOREDIS = 'ioredis'

async function connect(url: string): Promise<IORedis> {
  let mod: typeof import('ioredis')
  try {
    mod = (await import(IOREDIS)) as typeof import('ioredis')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw err
    throw new Exit(1, 'the CLI talks to Redis through the ioredis package, which is not installed: run `npm install ioredis`')
  }
  const Redis = mod.Redis ?? mod.default
  let connected = false
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 5_000,
    maxRetriesPerRequest: 3,
    // Fail at once if Redis is not there to begin with; once connected, ride out short outages.
    retryStrategy: (attempt) => (connected ? Math.min(attempt * 100, 2_000) : null),
  })
  let lastError: Error | undefined
  // Later errors surface as failed commands or a lost lease; ioredis reconnects by itself.
  client.on('error', (err: Error) => void (lastError = err))
  try {
    await client.connect()
    connected = true
  } catch (err) {
    // No disconnect(): with retries off the client has ended by itself, and disconnect() would
    // leave a 2 s timer of ioredis' behind.
    throw new Exit(1, `cannot connect to Redis at ${redact(url)}: ${(lastError ?? (err as Error)).message}`)
  }
  return client
}

/** `locks.acquire`, but SIGINT/SIGTERM/SIGHUP while waiting give up the wait cleanly. */
async function acquire(locks: Locks, resource: string, options: AcquireOptions): Promise<Lease> {
  const controller = new AbortController()
  const onSignal = (signal: NodeJS.Signals) => controller.abort(signal)
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
  for (const signal of signals) process.on(signal, onSignal)
  try {
    return await locks.acquire(resource, { ...options, signal: controller.signal })
  } catch (err) {
    if (!(err instanceof LockAbortedError)) throw err
    const signal = controller.signal.reason as NodeJS.Signals
    throw new Exit(signalExit(signal), `${signal} while waiting for lock "${resource}"; gave up`)
  } finally {
    for (const signal of signals) process.off(signal, onSignal)
  }
}

function describe(info: LockInfo): string {
  const fence = info.fence ?? 'none'
  return info.held
    ? `${info.resource}: held, fence ${fence}, ttl ${info.ttl} ms, ${info.waiters} waiting, token ${info.token}`
    : `${info.resource}: free, last fence ${fence}, ${info.waiters} waiting`
}

const options = (ttl: number | undefined, wait: number | undefined): AcquireOptions => ({
  ...(ttl !== undefined && { ttl }),
  ...(wait !== undefined && { wait }),
})

async function execute(command: Exclude<Command, { name: 'help' | 'version' }>, locks: Locks): Promise<number> {
  switch (command.name) {
    case 'inspect': {
      const info = await locks.inspect(command.resource)
      print(command.json ? JSON.stringify(info) : describe(info))
      return 0
    }
    case 'acquire': {
      // Not extended and not released: the lock lives for its ttl, for whoever uses the fence.
      const lease = await acquire(locks, command.resource, options(command.ttl, command.wait))
      const { resource, token, fence, ttl } = lease
      print(command.json ? JSON.stringify({ resource, token, fence, ttl }) : `token=${token} fence=${fence} ttl=${ttl}`)
      return 0
    }
    case 'release': {
      const released = await locks.release(command.resource, command.token)
      if (!released) log(`lock "${command.resource}" is not held by that token (expired, released, or taken over); nothing changed`)
      return released ? 0 : 1
    }
    case 'extend': {
      const extended = await locks.extend(command.resource, command.token, command.ttl)
      if (!extended) log(`lock "${command.resource}" is not held by that token (expired, released, or taken over); nothing changed`)
      return extended ? 0 : 1
    }
    case 'run': {
      const lease = await acquire(locks, command.resource, { ...options(command.ttl, command.wait), autoExtend: true })
      const code = await runHolding(lease, command.command, log)
      if (!lease.signal.aborted) {
        await lease.release().catch((err: Error) => log(`${err.message}; it expires within its ttl`))
      }
      return code
    }
  }
}

/** Waits for `promise` at most `ms`: a hung Redis must not keep the CLI from exiting. */
const within = (ms: number, promise: Promise<unknown>) =>
  Promise.race([promise.catch(() => {}), new Promise((resolve) => setTimeout(resolve, ms).unref())])

async function main(argv: string[]): Promise<number> {
  let command: Command
  try {
    command = parseCommandLine(argv)
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    log(err.message)
    log('see `fencelock --help` for usage')
    return 2
  }
  if (command.name === 'help') return print(USAGE), 0
  if (command.name === 'version') return print(pkg.version), 0

  const { redis: url, prefix } = command.connection
  const client = await connect(url)
  try {
    const locks = createLocks({ redis: client, ...(prefix !== undefined && { prefix }) })
    try {
      return await execute(command, locks)
    } finally {
      await within(1_000, locks.close())
    }
  } finally {
    await within(1_000, client.quit())
    client.disconnect()
  }
}

function exit(code: number): void {
  process.exitCode = code
  // Everything is closed by now; if some handle still lingers, do not hang on it.
  setTimeout(() => process.exit(code), 1_000).unref()
}

main(process.argv.slice(2)).then(exit, (err: unknown) => {
  if (err instanceof Exit) {
    log(err.message)
    return exit(err.code)
  }
  log(err instanceof Error ? err.message : String(err))
  // The library checked a value the command line passed on (for example a resource name too long).
  if (err instanceof InvalidArgumentError) return exit(2)
  if (err instanceof LockTimeoutError) log('another process holds the lock; use --wait to wait longer')
  exit(1)
})
