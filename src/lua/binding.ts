import type { LuaScript } from './index.js'

/** Runs a script on one node: how a topology lends a node to a primitive (plain, or followed by WAIT). */
export type Exec = (script: LuaScript, keys: readonly string[], args: readonly (string | number)[]) => Promise<unknown>

type Values<Names extends readonly string[], V> = { readonly [I in keyof Names]: V }

/**
 * A typed binding of one script: its KEYS and ARGV are named once here (the names mirror the
 * script's header, which a test checks), and a call passes them in that order. The only way
 * TypeScript calls a script: no call site packs KEYS and ARGV by hand.
 */
export interface ScriptBinding<K extends readonly string[], A extends readonly string[]> {
  readonly script: LuaScript
  readonly keyNames: K
  readonly argNames: A
  run(exec: Exec, keys: Values<K, string>, args: Values<A, string | number>): Promise<unknown>
}

export function bind<const K extends readonly string[], const A extends readonly string[]>(script: LuaScript, keyNames: K, argNames: A): ScriptBinding<K, A> {
  if (keyNames.length !== script.keys || script.variadic) throw new Error(`${script.name} declares ${script.keys} KEYS${script.variadic ? ' and more' : ''}, its binding names ${keyNames.length}`)
  return {
    script,
    keyNames,
    argNames,
    run(exec, keys, args) {
      // Checked at call time as well: a key left out would make Redis Cluster route by the wrong one.
      if (keys.length !== keyNames.length || args.length !== argNames.length) {
        return Promise.reject(new Error(`${script.name} takes ${keyNames.length} keys and ${argNames.length} args, got ${keys.length} and ${args.length}`))
      }
      return exec(script, keys, args)
    },
  }
}

/** A binding whose script takes `rest` further keys after the named ones (a semaphore's slots). */
export interface VariadicBinding<K extends readonly string[], A extends readonly string[]> {
  readonly script: LuaScript
  /** `moreArgs`: further ARGV after the named ones (`ARGV[n..]` in the header), e.g. one channel per resource. */
  run(exec: Exec, keys: Values<K, string>, rest: readonly string[], args: Values<A, string | number>, moreArgs?: readonly (string | number)[]): Promise<unknown>
}

export function bindVariadic<const K extends readonly string[], const A extends readonly string[]>(script: LuaScript, keyNames: K, rest: string, argNames: A): VariadicBinding<K, A> {
  if (keyNames.length !== script.keys || !script.variadic) throw new Error(`${script.name} declares ${script.keys} KEYS${script.variadic ? ' and more' : ''}, its binding names ${keyNames.length} and ${rest}`)
  return {
    script,
    run(exec, keys, more, args, moreArgs = []) {
      if (keys.length !== keyNames.length || args.length !== argNames.length) {
        return Promise.reject(new Error(`${script.name} takes ${keyNames.length} keys, then ${rest}, and ${argNames.length} args, got ${keys.length} and ${args.length}`))
      }
      return exec(script, [...keys, ...more], moreArgs.length === 0 ? args : [...args, ...moreArgs])
    },
  }
}
