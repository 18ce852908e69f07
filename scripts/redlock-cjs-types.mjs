// The CommonJS declarations of fencelock/redlock say what `require('fencelock/redlock')` is: the
// class itself (the build's footer makes it so, as `require('redlock')` is node-redlock v4's
// class), with the other exports on it. The declaration bundler writes ES exports
// (`export { Redlock as default, ... }`), which make `new (require('fencelock/redlock'))(...)` a
// type error (TS2351) under `// @ts-check` and in `import Redlock = require(...)`; this turns them
// into `export = Redlock`, a class merged with a namespace that carries the other names.
import path from 'node:path'
import { rewriteWhenWritten } from './declarations.mjs'

const EXPORTS = /^export \{([^}]*)\};\s*$/m

/**
 * `text` (a bundled .d.cts whose last statement exports `Redlock as default` and other names) with
 * that statement replaced by a namespace merged into `class Redlock` and `export = Redlock`.
 * Classes that are static members of Redlock (`Redlock.Lock`) get only their type in the
 * namespace; other values get a `const` too.
 */
export function redlockCjsTypes(text) {
  const match = EXPORTS.exec(text)
  if (!match) throw new Error('redlock.d.cts: no `export { ... }` statement to rewrite')
  const names = match[1]
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '' && !/ as default$/.test(s))
    .map((s) => (s.startsWith('type ') ? { name: s.slice(5), type: true } : { name: s, type: false }))
  const aliases = []
  const members = []
  for (const { name, type } of names) {
    aliases.push(`type _${name} = ${name};`)
    members.push(`    type ${name} = _${name};`)
    const isStatic = new RegExp(`^\\s*static ${name}: typeof ${name};`, 'm').test(text)
    if (!type && !isStatic) {
      aliases.push(`declare const _${name}Value: typeof ${name};`)
      members.push(`    const ${name}: typeof _${name}Value;`)
    }
  }
  const cjs = [
    ...aliases,
    "/** `require('fencelock/redlock')`: the class itself, the other exports on it. */",
    'declare namespace Redlock {',
    ...members,
    '}',
    'export = Redlock;',
    '',
  ].join('\n')
  return text.replace(EXPORTS, cjs)
}

/**
 * Waits until the declaration step has written `<dir>/redlock.d.cts` whole (its last statement
 * is the export list) at or after `since` (ms since the epoch), then rewrites it (at most
 * `timeout` ms: see declarations.mjs).
 */
export function rewriteRedlockCjsTypes(dir, since = Date.now(), timeout = 600_000) {
  return rewriteWhenWritten(
    path.join(dir, 'redlock.d.cts'),
    since,
    (text) => (/export = Redlock;\s*$/.test(text) ? null : EXPORTS.test(text) && text.trimEnd().endsWith('};') ? redlockCjsTypes(text) : undefined),
    timeout,
  )
}
