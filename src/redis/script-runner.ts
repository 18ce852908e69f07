import type { LuaScript } from '../scripts/index.js'
import { isNoScript } from './adapter.js'

/** Sends one command; `key` routes it on a cluster. */
export type Send = (args: string[], key: string | undefined) => Promise<unknown>

export interface ScriptRunner {
  /** EVALSHA, falling back to EVAL on NOSCRIPT (a restarted node has an empty script cache). */
  evalScript(script: LuaScript, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>
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
export function scriptRunner(send: Send): ScriptRunner {
  const loaded = new Set<string>()
  const body = (keys: readonly string[], args: readonly (string | number)[]): string[] => {
    const out = new Array<string>(1 + keys.length + args.length)
    out[0] = String(keys.length)
    for (let i = 0; i < keys.length; i++) out[1 + i] = keys[i]!
    for (let i = 0; i < args.length; i++) out[1 + keys.length + i] = String(args[i])
    return out
  }
  const evalFull = (script: LuaScript, rest: string[], key: string | undefined) => send(['eval', script.source, ...rest], key)
  const first = (script: LuaScript): boolean => {
    if (loaded.has(script.sha)) return false
    loaded.add(script.sha)
    return true
  }
  return {
    async evalScript(script, keys, args) {
      const rest = body(keys, args)
      if (first(script)) return evalFull(script, rest, keys[0])
      try {
        return await send(['evalsha', script.sha, ...rest], keys[0])
      } catch (err) {
        if (!isNoScript(err)) throw err
        return evalFull(script, rest, keys[0])
      }
    },
    async evalThenWait(script, keys, args, [count, timeout]) {
      const rest = body(keys, args)
      const wait = ['wait', String(count), String(timeout)]
      const toAcks = (value: unknown) => (typeof value === 'number' ? value : Number(value))
      const evaluated = first(script) ? evalFull(script, rest, keys[0]) : send(['evalsha', script.sha, ...rest], keys[0])
      const acked = send(wait, keys[0])
      try {
        const reply = await evaluated
        return [reply, toAcks(await acked)]
      } catch (err) {
        acked.catch(() => {})
        if (!isNoScript(err)) throw err
        const reply = await evalFull(script, rest, keys[0])
        return [reply, toAcks(await send(wait, keys[0]))]
      }
    },
  }
}
