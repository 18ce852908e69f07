import { promised, type Into } from '../util/into.js'

/** An argument of a script call (ARGV): the client sends numbers as their decimal text. */
export type Arg = string | number

/** A script's reply as the clients decode it: integer, bulk string, nil (Lua false), or an array. */
export type Reply = string | number | null | readonly Reply[]

/**
 * A Lua script with its SHA1 computed once at build time, and what its header declares (see
 * scripts/lua-header.mjs): the names of its KEYS and ARGV, and of the further ones it takes
 * after those (`KEYS[n..]`, `ARGV[n..]`), if any.
 */
export interface LuaScript {
  readonly name: string
  readonly sha: string
  readonly source: string
  readonly keyNames: readonly string[]
  readonly moreKeys?: string
  readonly argNames: readonly string[]
  readonly moreArgs?: string
}

/** Reads a script's reply where it arrives: the decoding runs in the same handler as the reply's checks. */
export type Decode = (reply: never) => unknown

/**
 * Runs a script on one node: how a topology lends a node to a primitive (plain, or followed by
 * WAIT). What `decode` made of the reply goes to `into.value`, a failure (or what `decode` threw)
 * to `into.error`; nothing is returned and no promise is made for it (the convention of
 * util/into.ts).
 */
export type Exec = (script: LuaScript, keys: readonly string[], args: readonly Arg[], decode: Decode, into: Into<unknown>) => void

/**
 * The typed binding of one script, generated from its header into src/lua/embedded/: `K` and `A`
 * are its KEYS and ARGV as labelled tuples (the header's names), `R` its reply shapes. The only
 * way TypeScript calls a script: no call site packs KEYS and ARGV by hand.
 */
export interface Script<K extends readonly string[], A extends readonly Arg[], R> extends LuaScript {
  /** Sends the script; what `decode` makes of its reply goes to `into` (a failure too). */
  send<T>(exec: Exec, keys: K, args: A, decode: (reply: R) => T, into: Into<T>): void
  /** `send`, promised (for calls off the hot path): its reply, or what `decode` made of it. */
  run(exec: Exec, keys: K, args: A): Promise<R>
  run<T>(exec: Exec, keys: K, args: A, decode: (reply: R) => T): Promise<T>
}

/** What a script's binding answers. */
export type ReplyOf<S> = S extends Script<readonly string[], readonly Arg[], infer R> ? R : never

const same = (reply: never): unknown => reply

export function script<K extends readonly string[], A extends readonly Arg[], R>(described: LuaScript): Script<K, A, R> {
  // The types carry the counts: nothing to check per call on the hot path.
  const bound: Script<K, A, R> = {
    ...described,
    send: (exec, keys, args, decode, into) => exec(bound, keys, args, decode as Decode, into as Into<unknown>),
    run: (exec: Exec, keys: K, args: A, decode: Decode = same) => promised<never>((into) => exec(bound, keys, args, decode, into)),
  }
  return bound
}
