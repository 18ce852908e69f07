// The command line, read by commander: subcommands, per-command --help, "did you mean"
// suggestions. Parsing never prints or exits: it returns one Command or throws UsageError, and
// main.ts decides what to print and which exit code to use.
import { Command as Program, CommanderError, Option, type OutputConfiguration } from 'commander'
import { helpStyle, useColor } from './color.js'
import type { Command, Connection } from './command.js'
import { addSubcommands, time } from './subcommands.js'
import { AFTER_HELP, EXPECTED, usageError } from './usage.js'
import { DEFAULT_REDIS, parseClient, parseRedisUrl, UsageError, type ClientName } from './values.js'

export { UsageError } from './values.js'

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

/**
 * A command as the list of commands shows it: its first form (run has two), without `[options]`
 * where it is long, so that the column of terms leaves room for wrapped descriptions in 80.
 */
function subcommandTerm(cmd: Program): string {
  const term = `${cmd.name()} ${cmd.usage().split('\n')[0]}`
  return term.length > 36 ? term.replace(' [options]', '') : term
}

function connectionOf(globals: Globals, env: NodeJS.ProcessEnv): Connection {
  const redis = globals.redis ?? [env.REDIS_URL ? parseRedisUrl(env.REDIS_URL, 'REDIS_URL') : DEFAULT_REDIS]
  const tls = {
    ...(globals.tlsCa !== undefined && { ca: globals.tlsCa }),
    ...(globals.tlsCert !== undefined && { cert: globals.tlsCert }),
    ...(globals.tlsKey !== undefined && { key: globals.tlsKey }),
  }
  if ((tls.cert === undefined) !== (tls.key === undefined))
    throw new UsageError(
      `Option ${tls.cert === undefined ? '--tls-key' : '--tls-cert'} needs ${tls.cert === undefined ? '--tls-cert' : '--tls-key'} too (a client certificate and its key)`,
    )
  return { redis, prefix: globals.prefix, cluster: globals.cluster === true, client: globals.client, user: globals.user, tls, maxTtl: globals.maxTtl }
}

function buildProgram(
  env: NodeJS.ProcessEnv,
  version: string,
  output: OutputConfiguration,
  afterDashes: string[] | undefined,
  done: (command: Command) => void,
): Program {
  const program = new Program('fencelock')
    .description('Distributed locks on Redis with fencing tokens.')
    .usage('<command> [options]')
    .version(version, '-v, --version', 'Show the version')
    .helpOption('-h, --help', 'Show help (fencelock <command> --help: help of one command)')
    .option(
      '--redis <url>',
      'Redis URL, redis:// or rediss://; repeat it for a quorum of independent nodes',
      (value: string, previous: string[] | undefined) => [...(previous ?? []), parseRedisUrl(value, '--redis')],
    )
    .option('--cluster', 'The --redis URLs are seed nodes of one Redis Cluster')
    .option('--client <name>', 'Client library: ioredis or node-redis (default: ioredis if installed)', parseClient)
    .option('--prefix <text>', 'Prefix of every key (default: fencelock:)')
    .option('--user <name>', 'ACL user; the password comes from the URL or $REDIS_PASSWORD')
    .option('--tls-ca <file>', 'CA certificate (PEM) to trust for rediss://')
    .option('--tls-cert <file>', 'Client certificate (PEM), with --tls-key')
    .option('--tls-key <file>', 'Key of the client certificate (PEM)')
    .addOption(
      new Option(
        '--max-ttl <time>',
        'Longest ttl allowed; with a quorum also how long a restarted node stays out of the count (default: 30s with a quorum, else 24d)',
      ).argParser(time('--max-ttl', 'ttl')),
    )
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput(output)
    .configureHelp({ showGlobalOptions: true, ...helpStyle, subcommandTerm })
    .helpCommand('help [command]', 'Show help of a command')
    .addHelpText('after', AFTER_HELP)
  addSubcommands({
    sub: (name, summary, description) =>
      program
        .command(name)
        .summary(summary)
        .description(description)
        .allowExcessArguments()
        .configureHelp({ showGlobalOptions: true, ...helpStyle }),
    connection: (cmd) => connectionOf(cmd.optsWithGlobals<Globals>(), env),
    afterDashes,
    done,
  })
  return program
}
