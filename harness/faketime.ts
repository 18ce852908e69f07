// A redis-server whose wall clock the harness moves while it runs: the process runs under
// libfaketime (LD_PRELOAD), which reads the offset from a timestamp file on every call
// (FAKETIME_NO_CACHE=1). Only the wall clock moves (FAKETIME_DONT_FAKE_MONOTONIC=1): Redis's `TIME`,
// key expiry and uptime follow it, as they follow a real clock step. It needs a libc-malloc build
// (harness/servers.ts): Debian's jemalloc redis-server aborts on recursive clock_gettime calls
// under libfaketime.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { startRedis, type RedisProcess } from './redis-server.js'
import { serverBinary, type ServerName } from './servers.js'

const LIBRARIES = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
]

/** The server version clock tests run on: a libc-malloc build. */
export const CLOCK_SERVER: ServerName = 'redis-7.4.1'

/** A redis-server's wall clock, as an offset from the real one that the harness moves. */
export interface ServerClock {
  /** The current offset from the real wall clock, ms (negative: behind). */
  readonly offsetMs: number
  /** Moves the server's clock by `ms` (negative: back) from where it is now; takes effect at its next clock read. */
  step(ms: number): void
  /** Puts the server's clock back on the real one. */
  reset(): void
}

/** A redis-server under libfaketime, and its clock. */
export interface ClockedRedis {
  redis: RedisProcess
  clock: ServerClock
  /** Stops the server and removes the timestamp file. */
  stop(): Promise<void>
}

/**
 * libfaketime's preload library and a libc-malloc redis-server, or why there are none. In CI a
 * missing one is fatal; elsewhere the caller skips with the printed reason (as serverBinary does).
 */
export function clockTools(): { library: string; server: string } | { missing: string } {
  const library = LIBRARIES.find((l) => existsSync(l))
  if (!library) {
    const reason = 'libfaketime is not installed (apt-get install -y libfaketime)'
    if (process.env.CI === 'true') throw new Error(`[fencelock server clocks] ${reason}. In CI this is fatal: .ci/run installs it.`)
    console.warn(`[fencelock server clocks] skipping: ${reason}`)
    return { missing: reason }
  }
  const built = serverBinary(CLOCK_SERVER)
  return 'missing' in built ? built : { library, server: built.server }
}

/** A timestamp file for libfaketime and the clock it drives. */
export function serverClock(): ServerClock & { file: string; dispose(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-clock-'))
  const file = path.join(dir, 'faketime')
  let offsetMs = 0
  // "+12.345" / "-300": an offset in seconds from the real clock, read again on every call.
  const write = () => writeFileSync(file, `${offsetMs < 0 ? '-' : '+'}${(Math.abs(offsetMs) / 1000).toFixed(3)}\n`)
  write()
  return {
    file,
    get offsetMs() {
      return offsetMs
    },
    step(ms: number) {
      offsetMs += ms
      write()
    },
    reset() {
      offsetMs = 0
      write()
    },
    dispose() {
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** The environment that runs a process under libfaketime with the clock of `file`. */
export function faketimeEnv(library: string, file: string): Record<string, string> {
  return { LD_PRELOAD: library, FAKETIME_TIMESTAMP_FILE: file, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' }
}

/** Starts a redis-server (a libc-malloc build, see clockTools) under libfaketime; a restart keeps the clock. */
export async function startClockedRedis(tools: { library: string; server: string }, opts: { args?: string[] } = {}): Promise<ClockedRedis> {
  const clock = serverClock()
  try {
    const redis = await startRedis({ server: tools.server, env: faketimeEnv(tools.library, clock.file), ...(opts.args ? { args: opts.args } : {}) })
    return {
      redis,
      clock,
      async stop() {
        await redis.stop()
        clock.dispose()
      },
    }
  } catch (err) {
    clock.dispose()
    throw err
  }
}
