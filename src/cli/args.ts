// The command line, read by commander: subcommands, per-command --help, "did you mean"
// suggestions. Parsing never prints or exits: it returns one Command or throws UsageError, and
// main.ts decides what to print and which exit code to use.
import { Command as Program, CommanderError, Option, type OutputConfiguration } from 'commander'
import type { Kind } from './scan.js'
import { helpStyle, useColor } from './color.js'
import { AFTER_HELP, EXPECTED, usageError } from './usage.js'
import { DEFAULT_REDIS, parseClient, parseCount, parseRedisUrl, parseTime, UsageError, type ClientName } from './values.js'

export { UsageError } from './values.js'

/** Where and how to reach Redis. The password never appears here (URL or REDIS_PASSWORD). */
export interface Connection {
  /** Redis URLs (redis:// or rediss://): one node, several independent nodes (a quorum), or cluster seeds. */
  redis: string[]
  prefix: string | undefined
  /** The URLs are seeds of one Redis Cluster. */
  cluster: boolean
  /** Client library; undefined: ioredis if installed, else node-redis. */
  client: ClientName | undefined
  /** ACL user (a user in the URL wins). */
  user: string | undefined
  /** Files of PEM certificates and key for TLS. */
  tls: { ca?: string; cert?: string; key?: string }
  /** createLocks' maxTtl (quorum: also how long a restarted node stays out of counting). */
  maxTtl: number | undefined
}

/** What `run` holds while its command runs. */
export type Hold = { kind: 'mutex' } | { kind: 'semaphore'; limit: number } | { kind: 'read' } | { kind: 'write' }

export type Command =
  | { name: 'help'; text: string }
  | { name: 'version' }
  | {
      name: 'inspect'
      connection: Connection
      /** One exact name (a mutex unless `kind` says otherwise), or undefined for a listing. */
      resource: string | undefined
      /** What the exact name is: a mutex (one line, as earlier versions printed), a semaphore or a read/write lock (a listing row). */
      kind: Kind
      /** Glob over resource names for a listing; undefined: every held or waited-for one. */
      pattern: string | undefined
      json: boolean
      all: boolean
      watch: boolean
      interval: number
    }
  | { name: 'acquire'; connection: Connection; resource: string; ttl: number | undefined; wait: number | undefined; json: boolean }
  | { name: 'run'; connection: Connection; resource: string; ttl: number | undefined; wait: number | undefined; hold: Hold; command: string[] }
  | { name: 'release'; connection: Connection; resource: string; kind: Kind; token: string | undefined; force: boolean; yes: boolean }
  | { name: 'extend'; connection: Connection; resource: string; token: string; ttl: number | undefined }

/** An inspect argument with one of these is a glob, else one exact name. */
const GLOB = /[*?[]/

export interface ParseOptions {
  /** The version `--version` prints. */
  version?: string
  /** Is stdout a terminal (help in colour, unless NO_COLOR)? Default: process.stdout.isTTY. */
  stdoutIsTTY?: boolean
}

/**
 * Turns `process.argv.slice(2)` into one command, or throws `UsageError` naming the bad value.
 * Everything after the first `--` is the command of `run`, never options of ours.
 */
export function parseCommandLine(args: string[], env: NodeJS.ProcessEnv = process.env, options: ParseOptions = {}): Command {
  const split = args.indexOf('--')
  const before = split === -1 ? args : args.slice(0, split)
  const after = split === -1 ? undefined : args.slice(split + 1)
  let result: Command | undefined
  let help = ''
  const color = useColor(env, options.stdoutIsTTY ?? process.stdout.isTTY === true)
  // Set before the subcommands are made: each copies its parent's settings when created.
  const output = {
    writeOut: (text: string) => void (help += text),
    writeErr: (text: string) => void (help += text),
    outputError: () => {},
    getOutHasColors: () => color,
    getErrHasColors: () => false,
  }
  const program = buildProgram(env, options.version ?? '', output, after, (command) => (result = command))
  try {
    program.parse(before, { from: 'user' })
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err
    if (err.code === 'commander.helpDisplayed') return { name: 'help', text: help }
    if (err.code === 'commander.version') return { name: 'version' }
    throw usageError(err, before)
  }
  if (!result) throw new UsageError(`Missing command: ${EXPECTED}`)
  return result
}

function noExtra(extra: string[], what = ''): void {
  if (extra.length > 0) throw new UsageError(`Unexpected argument ${JSON.stringify(extra[0])}${what}`)
}

/** Options common to every command (given before or after the command's name). */
interface Globals {
  redis?: string[]
  prefix?: string
  cluster?: boolean
  client?: ClientName
  user?: string
  tlsCa?: string
  tlsCert?: string
  tlsKey?: string
  maxTtl?: number
}

function connectionOf(globals: Globals, env: NodeJS.ProcessEnv): Connection {
  const redis = globals.redis ?? [env.REDIS_URL ? parseRedisUrl(env.REDIS_URL, 'REDIS_URL') : DEFAULT_REDIS]
  const tls = { ...(globals.tlsCa !== undefined && { ca: globals.tlsCa }), ...(globals.tlsCert !== undefined && { cert: globals.tlsCert }), ...(globals.tlsKey !== undefined && { key: globals.tlsKey }) }
  if ((tls.cert === undefined) !== (tls.key === undefined)) throw new UsageError(`Option ${tls.cert === undefined ? '--tls-key' : '--tls-cert'} needs ${tls.cert === undefined ? '--tls-cert' : '--tls-key'} too (a client certificate and its key)`)
  return { redis, prefix: globals.prefix, cluster: globals.cluster === true, client: globals.client, user: globals.user, tls, maxTtl: globals.maxTtl }
}

const time = (option: string, kind: 'ttl' | 'wait' | 'period') => (value: string) => parseTime(value, option, kind)

function buildProgram(env: NodeJS.ProcessEnv, version: string, output: OutputConfiguration, afterDashes: string[] | undefined, done: (command: Command) => void): Program {
  const program = new Program('fencelock')
    .description('Distributed locks on Redis with fencing tokens.')
    .usage('<command> [options]')
    .version(version, '-v, --version', 'Show the version')
    .helpOption('-h, --help', 'Show help (fencelock <command> --help: help of one command)')
    .option('--redis <url>', 'Redis URL, redis:// or rediss://; repeat it for a quorum of independent nodes', (value: string, previous: string[] | undefined) => [...(previous ?? []), parseRedisUrl(value, '--redis')])
    .option('--cluster', 'The --redis URLs are seed nodes of one Redis Cluster')
    .option('--client <name>', 'Client library: ioredis or node-redis (default: ioredis if installed)', parseClient)
    .option('--prefix <text>', 'Prefix of every key (default: fencelock:)')
    .option('--user <name>', 'ACL user; the password comes from the URL or $REDIS_PASSWORD')
    .option('--tls-ca <file>', 'CA certificate (PEM) to trust for rediss://')
    .option('--tls-cert <file>', 'Client certificate (PEM), with --tls-key')
    .option('--tls-key <file>', 'Key of the client certificate (PEM)')
    .addOption(new Option('--max-ttl <time>', 'Longest ttl allowed; with a quorum also how long a restarted node stays out of the count (default: 30s with a quorum, else 24d)').argParser(time('--max-ttl', 'ttl')))
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput(output)
    .configureHelp({ showGlobalOptions: true, ...helpStyle, subcommandTerm: (cmd) => `${cmd.name()} ${cmd.usage()}` })
    .helpCommand('help [command]', 'Show help of a command')
    .addHelpText('after', AFTER_HELP)
  const globals = (cmd: Program) => connectionOf(cmd.optsWithGlobals<Globals>(), env)
  const dashes = (name: string) => {
    if (afterDashes !== undefined && name !== 'run') noExtra(afterDashes)
  }
  const sub = (name: string, summary: string, description: string) =>
    program.command(name).summary(summary).description(description).allowExcessArguments().configureHelp({ showGlobalOptions: true, ...helpStyle })

  sub('inspect', 'Holders, fences, ttls and waiters', 'Show holders, fences, remaining ttls and waiters: of every held or waited-for lock, of the names matching a glob, or of one mutex, semaphore or read/write lock')
    .argument('[pattern]', 'a resource name (one mutex; with --semaphore or --read-write, one of those), or a glob such as "account:*" (* ? [abc], \\ escapes)')
    .option('--json', 'Print JSON: one document (an array; one exact name: one object)')
    .option('--all', 'Without a pattern: also the free resources that still keep a last fence')
    .option('--watch', 'Print again every --interval until SIGINT or SIGTERM')
    .addOption(new Option('--interval <time>', 'Refresh period of --watch (default: 1s)').argParser(time('--interval', 'period')))
    .addOption(new Option('--semaphore', '<pattern> is the exact name of a semaphore: show it').conflicts(['readWrite']))
    .option('--read-write', '<pattern> is the exact name of a read/write lock: show it')
    .action((pattern: string | undefined, opts: { json?: boolean; all?: boolean; watch?: boolean; interval?: number; semaphore?: boolean; readWrite?: boolean }, cmd: Program) => {
      dashes('inspect')
      noExtra(cmd.args.slice(1))
      if (pattern === '') throw new UsageError('Invalid <pattern> "": expected a resource name or a glob such as "account:*"')
      const glob = pattern !== undefined && GLOB.test(pattern)
      const kind: Kind = opts.semaphore ? 'semaphore' : opts.readWrite ? 'read-write' : 'mutex'
      if (kind !== 'mutex' && (pattern === undefined || glob)) {
        throw new UsageError(`Option --${kind} applies to one exact name (a listing or a glob shows every kind): usage: fencelock inspect <name> --${kind}`)
      }
      done({
        name: 'inspect',
        connection: globals(cmd),
        kind,
        resource: glob ? undefined : pattern,
        pattern: glob ? pattern : undefined,
        json: opts.json === true,
        all: opts.all === true,
        watch: opts.watch === true,
        interval: opts.interval ?? 1_000,
      })
    })

  sub('run', 'Run a command while holding the lock', 'Run a command while holding the lock (auto-extended), then release it. The command gets FENCELOCK_RESOURCE, FENCELOCK_FENCE and FENCELOCK_TOKEN in its environment')
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
      if (rest.length > 0 && afterDashes !== undefined) throw new UsageError(`Unexpected argument ${JSON.stringify(rest[0])} before --`)
      const command = afterDashes ?? rest
      if (command.length === 0 || command[0] === '') throw new UsageError('Missing command to run: usage: fencelock run <resource> -- <command> [args...]')
      const hold: Hold = opts.semaphore !== undefined ? { kind: 'semaphore', limit: opts.semaphore } : opts.read ? { kind: 'read' } : opts.write ? { kind: 'write' } : { kind: 'mutex' }
      done({ name: 'run', connection: globals(cmd), resource, ttl: opts.ttl, wait: opts.wait, hold, command })
    })

  sub('acquire', 'Take the lock, print its token and fence', 'Take the lock and print its token and fence; it is not extended and expires after --ttl unless released')
    .argument('<resource>', 'the lock')
    .addOption(new Option('--ttl <time>', 'Lease ttl, at least 100ms (default: 10s)').argParser(time('--ttl', 'ttl')))
    .addOption(new Option('--wait <time>', 'How long to wait for the lock, or Infinity (default: 15s)').argParser(time('--wait', 'wait')))
    .option('--json', 'Print JSON')
    .action((resource: string, opts: { ttl?: number; wait?: number; json?: boolean }, cmd: Program) => {
      dashes('acquire')
      noExtra(cmd.args.slice(1))
      if (resource === '') throw new UsageError('Missing <resource>: usage: fencelock acquire <resource>')
      done({ name: 'acquire', connection: globals(cmd), resource, ttl: opts.ttl, wait: opts.wait, json: opts.json === true })
    })

  sub('release', 'Release a lock by token, or --force', 'Release the lock held under <token> (from acquire); with --force, whoever holds it')
    .argument('<resource>', 'the lock (or semaphore, or read/write lock)')
    .argument('[token]', 'the token that acquire printed')
    .option('--force', 'Remove the current holder (every holder of a semaphore or read/write lock), whose token you do not have (asks first)')
    .option('-y, --yes', 'With --force: do not ask (required when stdin is not a terminal)')
    .addOption(new Option('--semaphore', '<resource> is a semaphore: release a permit by token, or with --force every permit').conflicts(['readWrite']))
    .option('--read-write', '<resource> is a read/write lock: release the writer or a reader by token, or with --force every holder')
    .action((resource: string, token: string | undefined, opts: { force?: boolean; yes?: boolean; semaphore?: boolean; readWrite?: boolean }, cmd: Program) => {
      dashes('release')
      noExtra(cmd.args.slice(2))
      if (resource === '') throw new UsageError('Missing <resource>: usage: fencelock release <resource> <token>')
      const force = opts.force === true
      if (force && token !== undefined) throw new UsageError(`Unexpected argument ${JSON.stringify(token)}: give either <token> or --force, not both`)
      if (!force && (token === undefined || token === '')) {
        throw new UsageError('Missing <token>: usage: fencelock release <resource> <token> (the token that acquire printed), or --force to remove the holder whose token you do not have')
      }
      if (opts.yes && !force) throw new UsageError('Option --yes applies to release --force only')
      const kind: Kind = opts.semaphore ? 'semaphore' : opts.readWrite ? 'read-write' : 'mutex'
      done({ name: 'release', connection: globals(cmd), resource, kind, token, force, yes: opts.yes === true })
    })

  sub('extend', 'Extend a lock by token', 'Push the expiry of the lock held under <token> to --ttl from now')
    .argument('<resource>', 'the lock')
    .argument('<token>', 'the token that acquire printed')
    .addOption(new Option('--ttl <time>', 'New ttl from now, at least 100ms (default: 10s)').argParser(time('--ttl', 'ttl')))
    .action((resource: string, token: string, opts: { ttl?: number }, cmd: Program) => {
      dashes('extend')
      noExtra(cmd.args.slice(2))
      if (token === '') throw new UsageError('Missing <token>: usage: fencelock extend <resource> <token> (the token that acquire printed)')
      done({ name: 'extend', connection: globals(cmd), resource, token, ttl: opts.ttl })
    })
  return program
}
