// The CommonJS declarations of fencelock/redlock say what `require('fencelock/redlock')` is: the
// class itself (the build's footer makes it so, as `require('redlock')` is node-redlock v4's
// class), with the other exports on it. The declaration bundler writes ES exports
// (`export { Redlock as default, ... }`), which make `new (require('fencelock/redlock'))(...)` a
// type error (TS2351) under `// @ts-check` and in `import Redlock = require(...)`; this turns them
// into `export = Redlock`, a class merged with a namespace that carries the other names.
import path from 'node:path'
import { rewriteWhenWritten } from './declarations.mjs'

const EXPORTS = /^export \{([^}]*)\};\s*$/m

/** The names of the `export { ... }` statement of `text` (but `Redlock as default`), each with whether it is a type only. */
function exportedNames(text, file) {
  const match = EXPORTS.exec(text)
  if (!match) throw new Error(`${file}: no \`export { ... }\` statement to rewrite`)
  return match[1]
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '' && !/ as default$/.test(s))
    .map((s) => (s.startsWith('type ') ? { name: s.slice(5), type: true } : { name: s, type: false }))
}

/**
 * `text` (a bundled .d.cts whose last statement exports `Redlock as default` and other names) with
 * that statement replaced by a namespace merged into `class Redlock` and `export = Redlock`.
 * Classes that are static members of Redlock (`Redlock.Lock`) get only their type in the
 * namespace; other values get a `const` too.
 */
export function redlockCjsTypes(text) {
  const names = exportedNames(text, 'redlock.d.cts')
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

const ESM_HEAD = "import Redlock from './redlock.cjs';"

/**
 * The ESM declarations of fencelock/redlock (`text`: the bundled redlock.d.ts) as re-exports of
 * the CommonJS ones, as the other entries' are (declarations.mjs): `export *` cannot reach into
 * `export = Redlock`, so the default import of it (the class, which an ES module gets from a
 * CommonJS one under every module mode) is exported as `default` and `Redlock`, and each other
 * name as the member of the same name of the class's namespace: a type, and for a value (a static
 * class, `Redlock.Lock`) a `const` of its type beside it. The package holds the declarations once.
 */
export function redlockEsmTypes(text) {
  const lines = [ESM_HEAD, 'export default Redlock;', 'export { Redlock };']
  for (const { name, type } of exportedNames(text, 'redlock.d.ts')) {
    if (name === 'Redlock') continue
    if (!type) lines.push(`export declare const ${name}: typeof Redlock.${name};`)
    lines.push(`export type ${name} = Redlock.${name};`)
  }
  return `${lines.join('\n')}\n`
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

/** As rewriteRedlockCjsTypes, for `<dir>/redlock.d.ts` and redlockEsmTypes. */
export function rewriteRedlockEsmTypes(dir, since = Date.now(), timeout = 600_000) {
  return rewriteWhenWritten(
    path.join(dir, 'redlock.d.ts'),
    since,
    (text) => (text.startsWith(ESM_HEAD) ? null : EXPORTS.test(text) && text.trimEnd().endsWith('};') ? redlockEsmTypes(text) : undefined),
    timeout,
  )
}
