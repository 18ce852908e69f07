import { parseArgs } from 'node:util'
import { parseDuration } from '../duration.js'
import { InvalidArgumentError } from '../errors.js'
import { MAX_TTL, MIN_TTL } from '../validate.js'

/** Bad input on the command line: the CLI prints the message and exits with code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}

export interface Connection {
  /** Redis URL (redis:// or rediss://). */
  redis: string
  prefix: string | undefined
}

export type Command =
  | { name: 'help' }
  | { name: 'version' }
  | { name: 'inspect'; connection: Connection; resource: string; json: boolean }
  | { name: 'acquire'; connection: Connection; resource: string; ttl: number | undefined; wait: number | undefined; json: boolean }
  | { name: 'run'; connection: Connection; resource: string; ttl: number | undefined; wait: number | undefined; command: string[] }
  | { name: 'release'; connection: Connection; resource: string; token: string }
  | { name: 'extend'; connection: Connection; resource: string; token: string; ttl: number | undefined }

export const USAGE = `Usage: fencelock <command> <resource> [options]

Distributed locks on Redis with fencing tokens.

Commands:
  inspect <resource>                     Show the holder, fence, remaining ttl and waiters
  run <resource> [options] -- <cmd> ...  Run a command while holding the lock (auto-extended), then
                                         release it. The command gets FENCELOCK_RESOURCE,
                                         FENCELOCK_FENCE and FENCELOCK_TOKEN in its environment
  acquire <resource> [options]           Take the lock and print its token and fence; it is not
                                         extended and expires after --ttl unless released
  release <resource> <token>             Release the lock held under <token> (from acquire)
  extend <resource> <token> [--ttl]      Push its expiry to --ttl from now

Options:
  --redis <url>    Redis server (default: $REDIS_URL, else redis://127.0.0.1:6379)
  --prefix <text>  Prefix of every key (default: fencelock:)
  --ttl <time>     run, acquire, extend: lease ttl, at least 100ms (default: 10s)
  --wait <time>    run, acquire: how long to wait for the lock, or Infinity (default: 15s)
                   A time has units, largest first: 250ms, 1.5s, 30s, 1m30s, 5m, 1h, 2d;
                   a number needs a unit (is 30 seconds or milliseconds?), except 0
  --json           inspect, acquire: print JSON
  -h, --help       Show this help
  -v, --version    Show the version

Exit status:
  0    done (run: the command exited with 0)
  1    the lock was not acquired within --wait (release, extend: <token> does not hold
       it), or Redis failed
  2    bad usage
  75   run: the lock was lost while the command ran; the command was sent SIGTERM
  126  run: the command could not be executed; 127: it was not found
  128+n  fencelock or the command was ended by signal n
  other  run: the command's own exit status

Examples:
  fencelock run nightly-backup --ttl 30s --wait 0 -- ./backup.sh --full
  fencelock inspect nightly-backup --json
  eval "$(fencelock acquire report --ttl 5m)" && make report; fencelock release report "$token"`

const DEFAULT_REDIS = 'redis://127.0.0.1:6379'

/**
 * A time flag, read by the library's own parser (`30s`, `1m30s`; a bare number other than 0 is
 * refused), within the range the library accepts, so a mistake is told in the flag's terms.
 */
function parseTime(value: string, option: string, { ttl }: { ttl: boolean }): number {
  let ms: number
  try {
    ms = parseDuration(value, { name: `${option} value`, infinity: !ttl, positive: ttl })
  } catch (err) {
    if (err instanceof InvalidArgumentError) throw new UsageError(err.message)
    throw err
  }
  const bad = (expected: string) => new UsageError(`Invalid ${option} value ${JSON.stringify(value)}: expected ${expected}`)
  if (ttl && ms < MIN_TTL) throw bad(`at least ${MIN_TTL}ms`)
  if (ms !== Infinity && ms > MAX_TTL) throw bad(`at most ${MAX_TTL / 86_400_000}d${ttl ? '' : ', or Infinity'}`)
  return ms
}

function parseRedisUrl(value: string, source: string): string {
  let url: URL | undefined
  try {
    url = new URL(value)
  } catch {}
  if (!url || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '') {
    throw new UsageError(`Invalid ${source} value ${JSON.stringify(value)}: expected a URL such as ${DEFAULT_REDIS} (redis:// or rediss://)`)
  }
  return value
}

/** Turns `process.argv.slice(2)` into one command, or throws `UsageError` naming the bad value. */
export function parseCommandLine(args: string[], env: NodeJS.ProcessEnv = process.env): Command {
  let parsed
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      tokens: true,
      options: {
        redis: { type: 'string' },
        prefix: { type: 'string' },
        ttl: { type: 'string' },
        wait: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    })
  } catch (err) {
    // Node's messages go on to explain `--` in general terms; name the value and what to do instead.
    const message = (err instanceof Error ? err.message : String(err)).split(/\.\s/)[0]!
    const ambiguous = /^Option '(--?\w+)' argument is ambiguous/.exec(message)
    if (ambiguous) {
      const value = args[args.indexOf(ambiguous[1]!) + 1] ?? ''
      throw new UsageError(`Option ${ambiguous[1]} is followed by ${JSON.stringify(value)}, which looks like an option; write ${ambiguous[1]}=${value} if it is the value`)
    }
    const hint = args[0] === 'run' && /unknown option/i.test(message) ? ': put the command to run after --, e.g. fencelock run job -- ls -l' : ''
    throw new UsageError(`${message}${hint}`)
  }
  const { values, tokens } = parsed
  if (values.help) return { name: 'help' }
  if (values.version) return { name: 'version' }

  // Everything after `--` is the command for `run`, never options of ours.
  const terminator = tokens.find((t) => t.kind === 'option-terminator')?.index ?? Infinity
  const before = tokens.flatMap((t) => (t.kind === 'positional' && t.index < terminator ? [t.value] : []))
  const after = terminator === Infinity ? [] : args.slice(terminator + 1)
  const [name, resource, ...rest] = before
  const names = ['inspect', 'run', 'acquire', 'release', 'extend'] as const
  const expected = 'expected inspect, run, acquire, release or extend'
  if (name === undefined) throw new UsageError(`Missing command: ${expected}`)
  if (name === 'help') return { name: 'help' }
  const isName = (value: string): value is (typeof names)[number] => (names as readonly string[]).includes(value)
  if (!isName(name)) throw new UsageError(`Unknown command ${JSON.stringify(name)}: ${expected}`)
  if (resource === undefined || resource === '') {
    throw new UsageError(`Missing <resource>: usage: fencelock ${name} <resource>${name === 'run' ? ' -- <command> [args...]' : ''}`)
  }

  const allowed: Record<string, readonly string[]> = { inspect: ['json'], acquire: ['ttl', 'wait', 'json'], run: ['ttl', 'wait'], release: [], extend: ['ttl'] }
  for (const option of ['ttl', 'wait', 'json'] as const) {
    if (values[option] !== undefined && !allowed[name]!.includes(option)) throw new UsageError(`Option --${option} does not apply to ${name}`)
  }
  const connection: Connection = {
    redis: values.redis !== undefined ? parseRedisUrl(values.redis, '--redis') : env.REDIS_URL ? parseRedisUrl(env.REDIS_URL, 'REDIS_URL') : DEFAULT_REDIS,
    prefix: values.prefix,
  }
  const ttl = values.ttl === undefined ? undefined : parseTime(values.ttl, '--ttl', { ttl: true })
  const wait = values.wait === undefined ? undefined : parseTime(values.wait, '--wait', { ttl: false })
  const json = values.json === true

  if (name === 'run') {
    if (rest.length > 0 && after.length > 0) throw new UsageError(`Unexpected argument ${JSON.stringify(rest[0])} before --`)
    const command = after.length > 0 ? after : rest
    if (command.length === 0 || command[0] === '') throw new UsageError('Missing command to run: usage: fencelock run <resource> -- <command> [args...]')
    return { name, connection, resource, ttl, wait, command }
  }
  if (name === 'release' || name === 'extend') {
    const [token, ...extra] = rest
    if (token === undefined || token === '') throw new UsageError(`Missing <token>: usage: fencelock ${name} <resource> <token> (the token that acquire printed)`)
    if (extra.length > 0 || after.length > 0) throw new UsageError(`Unexpected argument ${JSON.stringify(extra[0] ?? after[0])}`)
    return name === 'release' ? { name, connection, resource, token } : { name, connection, resource, token, ttl }
  }
  if (rest.length > 0 || after.length > 0) throw new UsageError(`Unexpected argument ${JSON.stringify(rest[0] ?? after[0])}`)
  return name === 'inspect' ? { name, connection, resource, json } : { name, connection, resource, ttl, wait, json }
}
