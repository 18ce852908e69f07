import type { Decode, LuaScript } from '../lua/index.js'
import { handDecoded, type Exec } from '../lua/binding.js'
import type { Into } from '../util/into.js'
import { isNoScript, isPermanentReplyError, leaving, type ScriptSender } from './adapter.js'
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

export type { ScriptSender } from './adapter.js'

export interface ScriptRunner {
  /** EVALSHA, falling back to EVAL on NOSCRIPT (a restarted node has an empty script cache); `decode` reads the reply (see Exec). */
  readonly evalScript: Exec
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
  const failure = (err: unknown): unknown => leaving(asRedisWrote(err), isClosed)
  const fail = (err: unknown): never => {
    throw failure(err)
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
  /** A refusal read by scriptFailed: classified, or a ServerVersionError once the server was asked. */
  const refused = (err: unknown, into: Into<unknown>): void => {
    try {
      void scriptFailed(err).then(undefined, into.error)
    } catch (thrown) {
      into.error(thrown)
    }
  }
  /** Sends with `send`: the reply decoded to `into`, a synchronous throw classified, a rejection to `failed`. */
  const sending = (send: () => Promise<unknown>, decode: Decode, into: Into<unknown>, failed: (err: unknown) => void): void => {
    let sent: Promise<unknown>
    try {
      sent = send()
    } catch (err) {
      return into.error(failure(err))
    }
    sent.then((reply) => handDecoded(decode, into, reply), failed)
  }
  const evalOnce: Exec = (script, keys, args, decode, into) =>
    sending(
      () => sender.eval(script.source, keys, args),
      decode,
      into,
      (err) => refused(err, into),
    )
  // EVALSHA, its reply decoded in the handler that receives it: no promise of fencelock's per call.
  // The outcomes: a synchronous throw of the client, a NOSCRIPT resent as EVAL, a refusal read by
  // scriptFailed, a decode that throws.
  const evalScript: Exec = (script, keys, args, decode, into) => {
    if (first(script)) return evalOnce(script, keys, args, decode, into)
    sending(
      () => sender.evalsha(script.sha, keys, args),
      decode,
      into,
      (err) => (isNoScript(asRedisWrote(err)) ? evalOnce(script, keys, args, decode, into) : refused(err, into)),
    )
  }
  return {
    evalScript,
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
