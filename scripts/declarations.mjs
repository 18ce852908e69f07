// Steps after tsup's declaration step: tsup runs it beside the JavaScript builds and calls
// onSuccess after those only, so a step that rewrites a declaration file waits for it here.
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Waits until `file` was written at or after `since` (ms since the epoch; a file from an earlier
 * build is overwritten, so it waits for this one) and `rewrite` accepts its text, then writes what
 * `rewrite` made of it. `rewrite(text)` returns the new text, `null` when the text is already
 * rewritten, or `undefined` while the file is not yet whole. Fails after `timeout` ms.
 */
export async function rewriteWhenWritten(file, since, rewrite, timeout = 600_000) {
  const started = Date.now()
  for (;;) {
    const fresh = existsSync(file) && statSync(file).mtimeMs >= since
    const rewritten = fresh ? rewrite(readFileSync(file, 'utf8')) : undefined
    if (rewritten === null) return
    if (rewritten !== undefined) {
      writeFileSync(file, rewritten)
      return
    }
    if (Date.now() - started > timeout) throw new Error(`${file} was not written within ${timeout} ms`)
    await sleep(50)
  }
}

/**
 * The ESM declarations of `names` (entries of `dir`) made one line each: `export * from
 * './<name>.cjs'`, the CommonJS declarations (<name>.d.cts) the declaration step writes beside
 * them with the same content but for the extension of what they import. TypeScript lets an ES
 * module re-export a CommonJS one's named exports under every module mode (and `export *`
 * re-exports no `default`, as the ESM build has none): consumers see the same names, and the
 * package holds each entry's declarations once (56 kB less unpacked). fencelock/redlock keeps
 * its own ESM declarations: its CommonJS ones are `export = Redlock` (redlock-cjs-types.mjs),
 * which an ES module cannot `export *` from.
 */
export function reexportCjsTypes(dir, names, since) {
  return Promise.all(
    names.map((name) => {
      const line = `export * from './${name}.cjs';\n`
      // Whole: the declaration bundler ends the file with its export list.
      return rewriteWhenWritten(path.join(dir, `${name}.d.ts`), since, (text) =>
        text === line ? null : /^export \{[^}]*\};\s*$/m.test(text) && text.trimEnd().endsWith('};') ? line : undefined,
      )
    }),
  )
}

/**
 * Deletes the declaration files of `dir` that are not `entries` (file names) and that no entry
 * reaches through relative imports, once the entries are written whole (at or after `since`): the
 * ESM chunks (`errors-<hash>.d.ts`) that the one-line re-exports (reexportCjsTypes) left without
 * an importer.
 */
export async function dropUnreachedTypeChunks(dir, entries, since) {
  const whole = (text) => (/^export (\{[^}]*\}|\* from '[^']+');\s*$/m.test(text) || /^export = \w+;\s*$/m.test(text) ? null : undefined)
  await Promise.all(entries.map((file) => rewriteWhenWritten(path.join(dir, file), since, whole)))
  const reached = new Set(entries)
  for (const file of reached) {
    for (const [, target] of readFileSync(path.join(dir, file), 'utf8').matchAll(/from '\.\/([^']+)'/g)) {
      const types = target.replace(/\.js$/, '.d.ts').replace(/\.cjs$/, '.d.cts')
      if (existsSync(path.join(dir, types))) reached.add(types)
    }
  }
  for (const file of readdirSync(dir)) if (/\.d\.c?ts$/.test(file) && !reached.has(file)) rmSync(path.join(dir, file))
}
