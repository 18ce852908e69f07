// What the command line says about itself: the help's closing text, and commander's errors said
// as fencelock says them (the value in quotes, what to do instead).
import type { CommanderError } from 'commander'
import { DEFAULT_REDIS, UsageError } from './values.js'

export const COMMANDS = ['inspect', 'run', 'acquire', 'release', 'extend', 'leader'] as const
export const EXPECTED = 'expected inspect, run, acquire, release, extend or leader'
/** Which command takes which of the command-specific flags, to say "does not apply" instead of "unknown". */
const FLAGS: Record<string, readonly string[]> = {
  inspect: ['--json', '--watch', '--interval', '--all'],
  acquire: ['--ttl', '--wait', '--json'],
  run: ['--ttl', '--wait', '--semaphore', '--read', '--write', '--elect', '--value'],
  leader: ['--json', '--watch'],
  release: ['--force', '--yes', '-y'],
  extend: ['--ttl'],
}

// Every line at most 80 columns (a test checks the whole help): a terminal's width.
export const AFTER_HELP = `
Times have units, largest first: 250ms, 1.5s, 30s, 1m30s, 5m, 1h, 2d;
a number needs a unit (is 30 seconds or milliseconds?), except 0.
--wait also takes Infinity.

Connection: --redis (default: $REDIS_URL, else ${DEFAULT_REDIS});
several --redis: a quorum of independent masters; --cluster: the URLs are seeds
of one Redis Cluster. The password comes from the URL or $REDIS_PASSWORD, never
from a flag.

Exit status:
  0      done (run: the command exited with 0)
  1      the lock is held: not acquired within --wait (the message names the
         holder); release, extend: <token> does not hold it; release --force:
         nothing held, not confirmed, or the holder changed; leader: none
  2      bad usage, or the client library (ioredis, redis) is not installed
  69     Redis could not be reached, did not answer in time, or failed
         (EX_UNAVAILABLE)
  70     an unexpected error in fencelock: please report it (EX_SOFTWARE)
  75     run: the lock (or with --elect, the leadership) was lost while the
         command ran; the command was sent SIGTERM
  77     Redis refused the password or a command: WRONGPASS, NOAUTH, NOPERM
         (EX_NOPERM)
  126    run: the command could not be executed; 127: it was not found
  128+n  fencelock or the command was ended by signal n
  other  run: the command's own exit status (stderr says when fencelock itself
         failed)

Examples:
  fencelock run nightly-backup --ttl 30s --wait 0 -- ./backup.sh --full
  fencelock run --semaphore 4 pdf-render -- ./render.sh
  fencelock run --elect scheduler --value "$HOSTNAME" --wait Infinity \\
    -- ./scheduler
  fencelock leader scheduler --watch
  fencelock inspect                       # every held or waited-for lock
  fencelock inspect 'account:*' --json
  fencelock release nightly-backup --force
  eval "$(fencelock acquire report --ttl 5m)" && make report
  fencelock release report "$token"

One command's flags: fencelock <command> --help. More: the README.md that comes
with fencelock (in the package's folder, e.g. node_modules/fencelock/README.md),
section "Command line".`

/** `fencelock watch` is a flag of two commands, not a command. */
const WATCH_HINT = '; to follow changes: fencelock inspect --watch (the locks), or fencelock leader <name> --watch (an election)'

/** The subcommand named on the command line, if any. */
const commandIn = (args: string[]): string | undefined => args.find((a) => (COMMANDS as readonly string[]).includes(a))

/** Commander's error, said as fencelock says it: the value in quotes, what to do instead. */
export function usageError(err: CommanderError, args: string[]): UsageError {
  const [first = '', ...more] = err.message.replace(/^error: /, '').split('\n')
  const suggestion = more.filter((line) => line.trim() !== '').join(' ')
  const tail = suggestion ? ` ${suggestion}` : ''
  const sub = commandIn(args)
  switch (err.code) {
    case 'commander.help':
      return new UsageError(`Missing command: ${EXPECTED}`)
    case 'commander.unknownCommand': {
      const name = /'(.*)'/.exec(first)?.[1] ?? ''
      return new UsageError(`Unknown command ${JSON.stringify(name)}: ${EXPECTED}${name === 'watch' ? WATCH_HINT : tail}`)
    }
    case 'commander.unknownOption': {
      const flag = /'(.*)'/.exec(first)?.[1] ?? ''
      const name = flag.split('=')[0]!
      if (sub && Object.values(FLAGS).some((flags) => flags.includes(name))) return new UsageError(`Option ${name} does not apply to ${sub}`)
      const hint = sub === 'run' && !suggestion ? ': put the command to run after --, e.g. fencelock run job -- ls -l' : tail
      return new UsageError(`Unknown option '${flag}'${hint}`)
    }
    case 'commander.missingArgument': {
      const name = /'(.*)'/.exec(first)?.[1] ?? 'resource'
      const usage =
        name === 'token'
          ? `fencelock ${sub} <resource> <token> (the token that acquire printed)`
          : `fencelock ${sub} <resource>${sub === 'run' ? ' -- <command> [args...]' : ''}`
      return new UsageError(`Missing <${name}>: usage: ${usage}`)
    }
    case 'commander.optionMissingArgument':
      return new UsageError(`Option ${/'(-[-\w]+)/.exec(first)?.[1] ?? ''} needs a value`)
    default:
      return new UsageError(`${first.charAt(0).toUpperCase()}${first.slice(1)}${tail}`)
  }
}
