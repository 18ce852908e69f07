// The subcommands of `fencelock`, each with its arguments, options, help and the checks that
// commander cannot make; each turns what it was given into one Command.
import { hostname } from 'node:os'
import { Option, type Command as Program } from 'commander'
import type { Command, Connection, Hold } from './command.js'
import type { Kind } from './scan.js'
import { parseCount, parseTime, UsageError } from './values.js'

/** What a subcommand needs from the program it joins. */
export interface Builder {
  /** A new subcommand of the program, its help set up as the program's. */
  sub(name: string, summary: string, description: string): Program
  /** The connection that the global options and the environment describe. */
  connection(cmd: Program): Connection
  /** The arguments after the first `--`: the command of `run`, refused by any other. */
  afterDashes: string[] | undefined
  /** Called with the command the line describes. */
  done(command: Command): void
}

/** An inspect argument with one of these is a glob, else one exact name. */
const GLOB = /[*?[]/

function noExtra(extra: string[], what = ''): void {
  if (extra.length > 0) throw new UsageError(`Unexpected argument ${JSON.stringify(extra[0])}${what}`)
}

// Only `run` takes a command after `--`.
const noDashes = (b: Builder) => {
  if (b.afterDashes !== undefined) noExtra(b.afterDashes)
}

export const time = (option: string, kind: 'ttl' | 'wait' | 'period') => (value: string) => parseTime(value, option, kind)

/** The subcommands, in the order help lists them. */
export function addSubcommands(b: Builder): void {
  inspectCommand(b)
  runCommand(b)
  leaderCommand(b)
  acquireCommand(b)
  releaseCommand(b)
  extendCommand(b)
}

function inspectCommand(b: Builder): void {
  b.sub(
    'inspect',
    'Holders, fences, ttls and waiters',
    'Show holders, fences, remaining ttls and waiters: of every held or waited-for lock and election, of the names matching a glob, or of one name',
  )
    .argument(
      '[pattern]',
      'a name (its mutex; where that is free, also an election, semaphore or read/write lock of that name), or a glob such as "account:*" (* ? [abc], \\ escapes)',
    )
    .option('--json', 'Print JSON: one document (an array; one exact name: one object)')
    .option('--all', 'Without a pattern: also the free resources that still keep a last fence')
    .option('--watch', 'Print again every --interval until SIGINT or SIGTERM')
    .addOption(new Option('--interval <time>', 'Refresh period of --watch (default: 1s)').argParser(time('--interval', 'period')))
    .addOption(new Option('--semaphore', '<pattern> is the exact name of a semaphore: show it').conflicts(['readWrite']))
    .option('--read-write', '<pattern> is the exact name of a read/write lock: show it')
    .action(
      (
        pattern: string | undefined,
        opts: { json?: boolean; all?: boolean; watch?: boolean; interval?: number; semaphore?: boolean; readWrite?: boolean },
        cmd: Program,
      ) => {
        noDashes(b)
        noExtra(cmd.args.slice(1))
        if (pattern === '') throw new UsageError('Invalid <pattern> "": expected a resource name or a glob such as "account:*"')
        const glob = pattern !== undefined && GLOB.test(pattern)
        const kind: Kind = opts.semaphore ? 'semaphore' : opts.readWrite ? 'read-write' : 'mutex'
        if (kind !== 'mutex' && (pattern === undefined || glob)) {
          throw new UsageError(`Option --${kind} applies to one exact name (a listing or a glob shows every kind): usage: fencelock inspect <name> --${kind}`)
        }
        b.done({
          name: 'inspect',
          connection: b.connection(cmd),
          kind,
          resource: glob ? undefined : pattern,
          pattern: glob ? pattern : undefined,
          json: opts.json === true,
          all: opts.all === true,
          watch: opts.watch === true,
          interval: opts.interval ?? 1_000,
        })
      },
    )
}

function runCommand(b: Builder): void {
  b.sub(
    'run',
    'Run a command while holding the lock',
    'Run a command while holding the lock (auto-extended), then release it. The command gets FENCELOCK_RESOURCE, FENCELOCK_FENCE and FENCELOCK_TOKEN in its environment',
  )
    // Two forms, one a line: on one line they made the help ~200 columns wide.
    .usage('<resource> [options] -- <cmd> [args...]\n       fencelock run --elect <name> [--value <v>] [options] -- <cmd> [args...]')
    .argument('[resource]', 'the lock, semaphore or read/write lock to hold (none with --elect)')
    .argument('[command...]', 'the command to run, after --')
    .addOption(new Option('--ttl <time>', 'Lease ttl, at least 100ms; extended while the command runs (default: 10s)').argParser(time('--ttl', 'ttl')))
    .addOption(new Option('--wait <time>', 'How long to wait for the lock, or Infinity (default: 15s)').argParser(time('--wait', 'wait')))
    .addOption(
      new Option('--semaphore <n>', 'Hold one of n permits of the semaphore <resource> instead of a lock')
        .argParser((v) => parseCount(v, '--semaphore', 1, 1_000))
        .conflicts(['read', 'write']),
    )
    .addOption(new Option('--read', 'Hold the read side of the read/write lock <resource> (shared with other readers)').conflicts(['write']))
    .addOption(new Option('--write', 'Hold the write side of the read/write lock <resource>'))
    .addOption(
      new Option('--elect <name>', 'Campaign in the election <name> and run the command as its leader; exit 75 when leadership is lost').conflicts([
        'semaphore',
        'read',
        'write',
      ]),
    )
    .option('--value <text>', 'With --elect: the value observers see for this leader (default: <host>:<pid>)')
    .action((given: string | undefined, rest: string[], opts: RunOptions, cmd: Program) => {
      const resource = runResource(b, given, opts)
      if (opts.elect !== undefined && given !== undefined) rest = [given, ...rest]
      if (rest.length > 0 && b.afterDashes !== undefined) throw new UsageError(`Unexpected argument ${JSON.stringify(rest[0])} before --`)
      const command = b.afterDashes ?? rest
      if (command.length === 0 || command[0] === '') throw new UsageError('Missing command to run: usage: fencelock run <resource> -- <command> [args...]')
      b.done({ name: 'run', connection: b.connection(cmd), resource, ttl: opts.ttl, wait: opts.wait, hold: holdOf(opts), command })
    })
}

interface RunOptions {
  ttl?: number
  wait?: number
  semaphore?: number
  read?: boolean
  write?: boolean
  elect?: string
  value?: string
}

/** What `run` holds: a lock, a permit, one side of a read/write lock, or the leadership of an election. */
const holdOf = (opts: RunOptions): Hold =>
  opts.elect !== undefined
    ? { kind: 'election', value: opts.value ?? `${hostname()}:${process.pid}` }
    : opts.semaphore !== undefined
      ? { kind: 'semaphore', limit: opts.semaphore }
      : opts.read
        ? { kind: 'read' }
        : opts.write
          ? { kind: 'write' }
          : { kind: 'mutex' }

/** The resource `run` holds: the one named, or with --elect the election. */
function runResource(b: Builder, given: string | undefined, opts: RunOptions): string {
  if (opts.value !== undefined && opts.elect === undefined) throw new UsageError('Option --value applies to run --elect <name> only')
  if (opts.elect !== undefined && given !== undefined && b.afterDashes !== undefined)
    throw new UsageError(`Unexpected argument ${JSON.stringify(given)}: with --elect the election is <name>, not a resource`)
  if (opts.elect === '') throw new UsageError('Invalid --elect "": expected an election name')
  const resource = opts.elect ?? given ?? ''
  if (resource === '') throw new UsageError('Missing <resource>: usage: fencelock run <resource> -- <command> [args...]')
  return resource
}

function leaderCommand(b: Builder): void {
  b.sub(
    'leader',
    'Show (or --watch) the leader of an election',
    'Show the leader of the election <name>: its value, term (fence) and remaining ttl; exit 1 when there is none. With --watch, print every change as it is pushed, until SIGINT or SIGTERM',
  )
    .argument('<name>', 'the election')
    .option('--json', 'Print JSON: the leader as an object, or null when vacant (one line per change with --watch)')
    .option('--watch', 'Print every change (new term, new value, vacancy) as it happens')
    .action((election: string, opts: { json?: boolean; watch?: boolean }, cmd: Program) => {
      noDashes(b)
      noExtra(cmd.args.slice(1))
      if (election === '') throw new UsageError('Missing <name>: usage: fencelock leader <name>')
      b.done({ name: 'leader', connection: b.connection(cmd), election, json: opts.json === true, watch: opts.watch === true })
    })
}

function acquireCommand(b: Builder): void {
  b.sub(
    'acquire',
    'Take the lock, print its token and fence',
    'Take the lock and print its token and fence; it is not extended and expires after --ttl unless released',
  )
    .argument('<resource>', 'the lock')
    .addOption(new Option('--ttl <time>', 'Lease ttl, at least 100ms (default: 10s)').argParser(time('--ttl', 'ttl')))
    .addOption(new Option('--wait <time>', 'How long to wait for the lock, or Infinity (default: 15s)').argParser(time('--wait', 'wait')))
    .option('--json', 'Print JSON')
    .action((resource: string, opts: { ttl?: number; wait?: number; json?: boolean }, cmd: Program) => {
      noDashes(b)
      noExtra(cmd.args.slice(1))
      if (resource === '') throw new UsageError('Missing <resource>: usage: fencelock acquire <resource>')
      b.done({ name: 'acquire', connection: b.connection(cmd), resource, ttl: opts.ttl, wait: opts.wait, json: opts.json === true })
    })
}

function releaseCommand(b: Builder): void {
  b.sub('release', 'Release a lock by token, or --force', 'Release the lock held under <token> (from acquire); with --force, whoever holds it')
    .argument('<resource>', 'the lock (or semaphore, or read/write lock)')
    .argument('[token]', 'the token that acquire printed')
    .option('--force', 'Remove the current holder (every holder of a semaphore or read/write lock), whose token you do not have (asks first)')
    .option('-y, --yes', 'With --force: do not ask (required when stdin is not a terminal)')
    .addOption(new Option('--semaphore', '<resource> is a semaphore: release a permit by token, or with --force every permit').conflicts(['readWrite']))
    .option('--read-write', '<resource> is a read/write lock: release the writer or a reader by token, or with --force every holder')
    .action((resource: string, token: string | undefined, opts: { force?: boolean; yes?: boolean; semaphore?: boolean; readWrite?: boolean }, cmd: Program) => {
      noDashes(b)
      noExtra(cmd.args.slice(2))
      if (resource === '') throw new UsageError('Missing <resource>: usage: fencelock release <resource> <token>')
      const force = opts.force === true
      if (force && token !== undefined) throw new UsageError(`Unexpected argument ${JSON.stringify(token)}: give either <token> or --force, not both`)
      if (!force && (token === undefined || token === '')) {
        throw new UsageError(
          'Missing <token>: usage: fencelock release <resource> <token> (the token that acquire printed), or --force to remove the holder whose token you do not have',
        )
      }
      if (opts.yes && !force) throw new UsageError('Option --yes applies to release --force only')
      const kind: Kind = opts.semaphore ? 'semaphore' : opts.readWrite ? 'read-write' : 'mutex'
      b.done({ name: 'release', connection: b.connection(cmd), resource, kind, token, force, yes: opts.yes === true })
    })
}

function extendCommand(b: Builder): void {
  b.sub('extend', 'Extend a lock by token', 'Push the expiry of the lock held under <token> to --ttl from now')
    .argument('<resource>', 'the lock')
    .argument('<token>', 'the token that acquire printed')
    .addOption(new Option('--ttl <time>', 'New ttl from now, at least 100ms (default: 10s)').argParser(time('--ttl', 'ttl')))
    .action((resource: string, token: string, opts: { ttl?: number }, cmd: Program) => {
      noDashes(b)
      noExtra(cmd.args.slice(2))
      if (token === '') throw new UsageError('Missing <token>: usage: fencelock extend <resource> <token> (the token that acquire printed)')
      b.done({ name: 'extend', connection: b.connection(cmd), resource, token, ttl: opts.ttl })
    })
}
