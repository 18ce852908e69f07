import { createHash } from 'node:crypto'
import { promised, type Into } from '../util/into.js'

/** An argument of a script call (ARGV): the client sends numbers as their decimal text. */
export type Arg = string | number

/** A script's reply as the clients decode it: integer, bulk string, nil (Lua false), or an array. */
export type Reply = string | number | null | readonly Reply[]

/**
 * A Lua script as it ships: its file name, its source, and the SHA1 that EVALSHA names it by.
 * What its header declares (the names of its KEYS and ARGV) lives in the generated binding's
 * types, not in the shipped code.
 */
export interface LuaScript {
  readonly name: string
  readonly source: string
  readonly sha: string
}

/** Reads a script's reply where it arrives: the decoding runs in the same handler as the reply's checks. */
export type Decode = (reply: never) => unknown

/**
 * Runs a script on one node, typed by its binding (KEYS, ARGV, reply): how a topology lends a node
 * to a primitive (plain, or followed by WAIT). What `decode` made of the reply goes to
 * `into.value`, a failure (or what `decode` threw) to `into.error`; no promise (util/into.ts).
 */
export type Exec = <K extends readonly string[], A extends readonly Arg[], R, T>(
  script: Script<K, A, R>,
  keys: K,
  args: A,
  decode: (reply: R) => T,
  into: Into<T>,
) => void

/**
 * The typed binding of one script, generated from its header into src/lua/embedded/: `K` and `A`
 * its KEYS and ARGV as labelled tuples, `R` its reply shapes. Scripts are called only through it.
 */
export interface Script<K extends readonly string[], A extends readonly Arg[], R> extends LuaScript {
  /** Never set: carries `K`, `A`, `R` for the type checker. */
  readonly types?: { readonly keys: K; readonly args: A; readonly reply: R }
  /** The script sent through `exec`, promised (for calls off the hot path): its reply, or what `decode` made of it. */
  run(exec: Exec, keys: K, args: A): Promise<R>
  run<T>(exec: Exec, keys: K, args: A, decode: (reply: R) => T): Promise<T>
}

/** Hands `reply`, read by `decode`, to `into`; what `decode` throws goes to `into.error`. */
export function handDecoded(decode: Decode, into: Into<unknown>, reply: unknown): void {
  let value: unknown
  try {
    value = decode(reply as never)
  } catch (err) {
    return into.error(err)
  }
  into.value(value)
}

/** What a script's binding answers. */
export type ReplyOf<S> = S extends Script<readonly string[], readonly Arg[], infer R> ? R : never

const same = <R>(reply: R): R => reply

export function script<K extends readonly string[], A extends readonly Arg[], R>(described: {
  readonly name: string
  readonly source: string
}): Script<K, A, R> {
  // The types carry the counts: nothing to check per call on the hot path. The SHA1 is taken once,
  // here (microseconds per script, at load): the hot path reads a field.
  const bound: Script<K, A, R> = {
    name: described.name,
    source: described.source,
    sha: createHash('sha1').update(described.source).digest('hex'),
    run: <T>(exec: Exec, keys: K, args: A, decode: (reply: R) => T = same as (reply: R) => T) => promised<T>((into) => exec(bound, keys, args, decode, into)),
  }
  return bound
}
