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
 * WAIT). With `decode`, the promise holds what `decode` made of the reply (one promise per call
 * on the hot path instead of one more `.then` per layer); a `decode` that throws rejects it.
 */
export interface Exec {
  (script: LuaScript, keys: readonly string[], args: readonly Arg[], decode?: Decode): Promise<unknown>
  /**
   * The same call, its decoded reply handed to `value` and its failure (or what `decode` threw) to
   * `error`, with no promise made for it: the hot path of a lone acquire or release. Absent (an
   * Exec that wraps another, as WAIT does): the caller uses the promise.
   */
  readonly into?: ExecInto
}

/** `Exec.into`: the reply read by `decode` goes to `value`, a failure to `error`; nothing is returned. */
export type ExecInto = (
  script: LuaScript,
  keys: readonly string[],
  args: readonly Arg[],
  decode: Decode,
  value: (decoded: unknown) => void,
  error: (err: unknown) => void,
) => void

/**
 * The typed binding of one script, generated from its header into src/lua/embedded/: `K` and `A`
 * are its KEYS and ARGV as labelled tuples (the header's names), `R` its reply shapes. The only
 * way TypeScript calls a script: no call site packs KEYS and ARGV by hand.
 */
export interface Script<K extends readonly string[], A extends readonly Arg[], R> extends LuaScript {
  run(exec: Exec, keys: K, args: A): Promise<R>
  /** The same, the reply read by `decode` in the handler that receives it. */
  run<T>(exec: Exec, keys: K, args: A, decode: (reply: R) => T): Promise<T>
  /** The same, through `Exec.into`: what `decode` made of the reply goes to `value`, a failure to `error`. */
  runInto<T>(exec: ExecInto, keys: K, args: A, decode: (reply: R) => T, value: (decoded: T) => void, error: (err: unknown) => void): void
}

/** What a script's binding answers. */
export type ReplyOf<S> = S extends Script<readonly string[], readonly Arg[], infer R> ? R : never

export function script<K extends readonly string[], A extends readonly Arg[], R>(described: LuaScript): Script<K, A, R> {
  // The types carry the counts: nothing to check per call on the hot path.
  const bound: Script<K, A, R> = {
    ...described,
    run: (exec: Exec, keys: K, args: A, decode?: Decode) => exec(bound, keys, args, decode) as Promise<never>,
    runInto: (exec, keys, args, decode, value, error) => exec(bound, keys, args, decode as Decode, value as (decoded: unknown) => void, error),
  }
  return bound
}
