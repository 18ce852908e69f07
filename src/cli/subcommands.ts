// The subcommands of `fencelock`, each with its arguments, options, help and the checks that
// commander cannot make; each turns what it was given into one Command.
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
  acquireCommand(b)
  releaseCommand(b)
  extendCommand(b)
}

function inspectCommand(b: Builder): void {
  b.sub('inspect', 'Holders, fences, ttls and waiters', 'Show holders, fences, remaining ttls and waiters: of every held or waited-for lock, of the names matching a glob, or of one mutex, semaphore or read/write lock')
    .argument('[pattern]', 'a resource name (one mutex; with --semaphore or --read-write, one of those), or a glob such as "account:*" (* ? [abc], \\ escapes)')
    .option('--json', 'Print JSON: one document (an array; one exact name: one object)')
    .option('--all', 'Without a pattern: also the free resources that still keep a last fence')
    .option('--watch', 'Print again every --interval until SIGINT or SIGTERM')
    .addOption(new Option('--interval <time>', 'Refresh period of --watch (default: 1s)').argParser(time('--interval', 'period')))
    .addOption(new Option('--semaphore', '<pattern> is the exact name of a semaphore: show it').conflicts(['readWrite']))
    .option('--read-write', '<pattern> is the exact name of a read/write lock: show it')
    .action((pattern: string | undefined, opts: { json?: boolean; all?: boolean; watch?: boolean; interval?: number; semaphore?: boolean; readWrite?: boolean }, cmd: Program) => {
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
    })
}

function runCommand(b: Builder): void {
  b.sub('run', 'Run a command while holding the lock', 'Run a command while holding the lock (auto-extended), then release it. The command gets FENCELOCK_RESOURCE, FENCELOCK_FENCE and FENCELOCK_TOKEN in its environment')
    .usage('<resource> [options] -- <cmd> [args...]')
    .argument('<resource>', 'the lock, semaphore or read/write lock to hold')
    .argument('[command...]', 'the command to run, after --')
    .addOption(new Option('--ttl <time>', 'Lease ttl, at least 100ms; extended while the command runs (default: 10s)').argParser(time('--ttl', 'ttl')))
    .addOption(new Option('--wait <time>', 'How long to wait for the lock, or Infinity (default: 15s)').argParser(time('--wait', 'wait')))
    .addOption(new Option('--semaphore <n>', 'Hold one of n permits of the semaphore <resource> instead of a lock').argParser((v) => parseCount(v, '--semaphore', 1, 1_000)).conflicts(['read', 'write']))
    .addOption(new Option('--read', 'Hold the read side of the read/write lock <resource> (shared with other readers)').conflicts(['write']))
    .addOption(new Option('--write', 'Hold the write side of the read/write lock <resource>'))
    .action((resource: string, rest: string[], opts: { ttl?: number; wait?: number; semaphore?: number; read?: boolean; write?: boolean }, cmd: Program) => {
      if (resource === '') throw new UsageError('Missing <resource>: usage: fencelock run <resource> -- <command> [args...]')
      if (rest.length > 0 && b.afterDashes !== undefined) throw new UsageError(`Unexpected argument ${JSON.stringify(rest[0])} before --`)
      const command = b.afterDashes ?? rest
      if (command.length === 0 || command[0] === '') throw new UsageError('Missing command to run: usage: fencelock run <resource> -- <command> [args...]')
      const hold: Hold = opts.semaphore !== undefined ? { kind: 'semaphore', limit: opts.semaphore } : opts.read ? { kind: 'read' } : opts.write ? { kind: 'write' } : { kind: 'mutex' }
      b.done({ name: 'run', connection: b.connection(cmd), resource, ttl: opts.ttl, wait: opts.wait, hold, command })
    })
}

function acquireCommand(b: Builder): void {
  b.sub('acquire', 'Take the lock, print its token and fence', 'Take the lock and print its token and fence; it is not extended and expires after --ttl unless released')
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
        throw new UsageError('Missing <token>: usage: fencelock release <resource> <token> (the token that acquire printed), or --force to remove the holder whose token you do not have')
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
