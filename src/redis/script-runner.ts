import type { Decode, LuaScript } from '../lua/index.js'
import type { Exec, ExecInto } from '../lua/binding.js'
import { isNoScript, isPermanentReplyError, leaving } from './adapter.js'
import { MIN_SERVER, ServerVersionError } from '../errors/errors.js'
import { classify } from '../errors/redis-failure.js'

/** A script that failed inside Redis: where a server too old for the scripts refuses them. */
const SCRIPT_FAILED = /Error running script|user_script|Unknown Redis command called from/i

/** The server's name and version from INFO server (Valkey reports `server_name:valkey` beside a Redis-compatible `redis_version`). */
export function serverOfInfo(info: string): { server: string; version: string } | undefined {
  const version = /^redis_version:(\S+)/m.exec(info)?.[1]
  if (!version) return undefined
  const valkey = /^valkey_version:(\S+)/m.exec(info)?.[1]
  return valkey ? { server: 'Valkey', version: valkey } : { server: 'Redis', version }
}

/** `version` (a.b.c) is older than `than`. */
export function olderThan(version: string, than: string): boolean {
  const a = version.split('.').map(Number)
  const b = than.split('.').map(Number)
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0)
  return false
}

/** How an adapter sends a script call and a plain command; `key` routes it on a cluster. */
export interface ScriptSender {
  evalsha(sha: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>
  eval(source: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>
  command(args: string[], key: string | undefined): Promise<unknown>
}

/**
 * The ScriptSender of a client that takes a command as one list of strings (node-redis, GLIDE):
 * `send(args, key)` sends it, routed by `key` on a cluster (the script's first key).
 */
export function argvSender(send: (args: string[], key?: string) => Promise<unknown>): ScriptSender {
  const call = (command: string, body: string, keys: readonly string[], args: readonly (string | number)[]) => {
    const out = [command, body, String(keys.length), ...keys]
    for (const arg of args) out.push(String(arg))
    return send(out, keys[0])
  }
  return {
    evalsha: (sha, keys, args) => call('EVALSHA', sha, keys, args),
    eval: (source, keys, args) => call('EVAL', source, keys, args),
    command: (args, key) => send(args, key),
  }
}

export interface ScriptRunner {
  /** EVALSHA, falling back to EVAL on NOSCRIPT (a restarted node has an empty script cache); `decode` reads the reply. With `into` (see Exec). */
  readonly evalScript: Exec & { readonly into: ExecInto }
  /** The same, with `WAIT numreplicas timeout` written right behind it: the reply and the acknowledgements. */
  evalThenWait(script: LuaScript, keys: readonly string[], args: readonly (string | number)[], wait: readonly [number, number]): Promise<[unknown, number]>
}

/**
 * The one EVALSHA path of every adapter. The first call of each script is an EVAL, which also
 * loads it: an EVALSHA that fails with NOSCRIPT and is resent would otherwise land behind commands
 * sent after it. `WAIT` is pipelined on the same connection, so it adds no round trip, only the
 * time the replicas take to acknowledge; if the script had to be re-sent as EVAL, the first WAIT
 * ran before it and proves nothing, so WAIT is sent again after the EVAL.
 */
export function scriptRunner(sender: ScriptSender, isClosed: () => boolean, asRedisWrote: (err: unknown) => unknown = (err) => err): ScriptRunner {
  const loaded = new Set<string>()
  const first = (script: LuaScript): boolean => {
    if (loaded.has(script.sha)) return false
    loaded.add(script.sha)
    return true
  }
  const toAcks = (value: unknown) => (typeof value === 'number' ? value : Number(value))
  // Every failure leaves classified (errors/redis-failure.ts); a synchronous throw (a client closed
  // meanwhile) stays synchronous, as the client threw it.
  const fail = (err: unknown): never => {
    throw leaving(asRedisWrote(err), isClosed)
  }
  // A script refused inside Redis may mean a server older than the scripts need: asked once (INFO
  // server, only after such a refusal: nothing on the hot path), answered with ServerVersionError.
  let found: Promise<{ server: string; version: string } | undefined> | undefined
  const serverOf = () => {
    found ??= sender.command(['INFO', 'server'], undefined).then(
      (info) => serverOfInfo(String(info)),
      () => undefined,
    )
    return found
  }
  const scriptFailed = (raw: unknown): Promise<never> | never => {
    const err = asRedisWrote(raw)
    if (!isPermanentReplyError(err) || !SCRIPT_FAILED.test((err as Error).message)) return fail(err)
    return serverOf().then((server) => {
      if (server && olderThan(server.version, MIN_SERVER)) throw classify(new ServerVersionError(server.server, server.version, { cause: err }), 'refused')
      return fail(err)
    })
  }
  const evalOnce = (script: LuaScript, keys: readonly string[], args: readonly (string | number)[], decode: Decode | undefined): Promise<unknown> => {
    try {
      return sender.eval(script.source, keys, args).then(decode as ((reply: unknown) => unknown) | undefined, scriptFailed)
    } catch (err) {
      return fail(err)
    }
  }
  const evalScript = (script: LuaScript, keys: readonly string[], args: readonly (string | number)[], decode?: Decode): Promise<unknown> => {
    if (first(script)) return evalOnce(script, keys, args, decode)
    let sent: Promise<unknown>
    try {
      sent = sender.evalsha(script.sha, keys, args)
    } catch (err) {
      return fail(err)
    }
    // Handlers instead of an async function, the reply decoded in the first: one promise per call.
    return sent.then(decode as ((reply: unknown) => unknown) | undefined, (err: unknown) =>
      isNoScript(asRedisWrote(err)) ? evalOnce(script, keys, args, decode) : scriptFailed(err),
    )
  }
  // The same outcomes as evalScript's promise, handed over: a synchronous throw of the client, a
  // NOSCRIPT resent as EVAL, a refusal read by scriptFailed, a decode that throws.
  const into = handingOver({
    sender,
    first,
    evalOnce,
    scriptFailed,
    isNoScript: (err) => isNoScript(asRedisWrote(err)),
    failure: (err) => leaving(asRedisWrote(err), isClosed),
  })
  return {
    evalScript: Object.assign(evalScript, { into }),
    async evalThenWait(script, keys, args, [count, timeout]) {
      const wait = ['WAIT', String(count), String(timeout)]
      try {
        const evaluated = first(script) ? sender.eval(script.source, keys, args) : sender.evalsha(script.sha, keys, args)
        const acked = sender.command(wait, keys[0])
        try {
          const reply = await evaluated
          return [reply, toAcks(await acked)]
        } catch (err) {
          acked.catch(() => {})
          if (!isNoScript(asRedisWrote(err))) throw err
          const reply = await sender.eval(script.source, keys, args)
          return [reply, toAcks(await sender.command(wait, keys[0]))]
        }
      } catch (err) {
        return scriptFailed(err)
      }
    },
  }
}

/** What `Exec.into` needs of the runner: its sender and its steps, as evalScript uses them. */
interface IntoSteps {
  sender: ScriptSender
  first(script: LuaScript): boolean
  evalOnce(script: LuaScript, keys: readonly string[], args: readonly (string | number)[], decode: Decode | undefined): Promise<unknown>
  scriptFailed(raw: unknown): Promise<never> | never
  isNoScript(err: unknown): boolean
  /** A synchronous throw of the client, classified as evalScript would throw it. */
  failure(err: unknown): unknown
}

/**
 * The runner's `Exec.into`: the same outcomes as evalScript's promise, handed over: a synchronous
 * throw of the client, a NOSCRIPT resent as EVAL, a refusal read by scriptFailed, a decode that throws.
 */
function handingOver({ sender, first, evalOnce, scriptFailed, isNoScript, failure }: IntoSteps): ExecInto {
  const evalOnceInto: ExecInto = (script, keys, args, decode, value, error) => {
    let sent: Promise<unknown>
    try {
      sent = evalOnce(script, keys, args, decode)
    } catch (err) {
      return error(err)
    }
    sent.then(value, error)
  }
  return (script, keys, args, decode, value, error) => {
    if (first(script)) return evalOnceInto(script, keys, args, decode, value, error)
    let sent: Promise<unknown>
    try {
      sent = sender.evalsha(script.sha, keys, args)
    } catch (err) {
      return error(failure(err))
    }
    sent.then(
      (reply) => {
        let decoded: unknown
        try {
          decoded = decode(reply as never)
        } catch (err) {
          return error(err)
        }
        value(decoded)
      },
      (err: unknown) => {
        if (isNoScript(err)) return evalOnceInto(script, keys, args, decode, value, error)
        try {
          void scriptFailed(err).then(undefined, error)
        } catch (thrown) {
          error(thrown)
        }
      },
    )
  }
}
