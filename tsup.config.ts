import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { defineConfig, type Options } from 'tsup'
import { rewriteRedlockCjsTypes } from './scripts/redlock-cjs-types.mjs'

type Plugin = NonNullable<Options['esbuildPlugins']>[number]

const cliDir = path.resolve('src/cli')
const libraryEntry = path.resolve('src/index.ts')

/**
 * The CLI reaches the library only through its public entry (`src/cli/*` imports `../index.js`),
 * and at run time through the published `dist/index.js` next to `dist/cli.js`: the library's code
 * exists once in the package, and the CLI shares one module instance with it (so `instanceof`
 * holds between the two). Any other import that leaves `src/cli/` (a library internal,
 * `package.json`) fails the build instead of being copied into `dist/cli.js`.
 */
const libraryFromDist: Plugin = {
  name: 'fencelock-cli-imports-dist-index',
  setup(build) {
    build.onResolve({ filter: /^\.\.?\// }, (args) => {
      if (args.kind === 'entry-point') return undefined
      const target = path.resolve(args.resolveDir, args.path)
      if (target.replace(/\.js$/, '.ts') === libraryEntry) return { path: './index.js', external: true }
      if (target.startsWith(cliDir + path.sep)) return undefined
      return {
        errors: [
          {
            text: `The CLI may import the library only through '../index.js' (its public API), got ${JSON.stringify(args.path)} in ${path.relative(process.cwd(), args.importer)}`,
          },
        ],
      }
    })
  },
}

// The time the build started: a redlock.d.cts older than it is from an earlier build.
const started = Date.now() - 1_000

// node-redlock's CommonJS shape: `require('fencelock/redlock')` is the class itself, as
// `require('redlock')` is, with the named exports (and `default`) on it.
const REDLOCK_CJS_FOOTER = '\nmodule.exports = Object.assign(module.exports.default, module.exports);\n'

/** Appends the CommonJS footer to dist/redlock.cjs (once: a rebuild writes the file anew). */
function redlockCjsFooter(dir: string): void {
  const file = path.join(dir, 'redlock.cjs')
  const text = readFileSync(file, 'utf8')
  if (!text.endsWith(REDLOCK_CJS_FOOTER)) writeFileSync(file, text + REDLOCK_CJS_FOOTER)
}

const ENTRIES = {
  index: 'src/index.ts',
  otel: 'src/otel/index.ts',
  'redis-semaphore': 'src/compat/redis-semaphore/index.ts',
  redlock: 'src/compat/redlock/index.ts',
}

/**
 * What both builds of the four entries share. The entries share one copy of the library: the code
 * they have in common is in shared chunks (ESM chunks; CommonJS chunks that each entry requires),
 * not bundled into each.
 */
const LIBRARY: Options = {
  entry: ENTRIES,
  dts: {
    // The declarations name Node's types (`node:diagnostics_channel`'s Channel, AsyncDisposable,
    // AbortSignal): a consumer whose tsconfig lists no @types (TypeScript 7's default, and
    // `tsc --init`'s `"types": []` since 5.9) still gets them, from the @types/node it has.
    banner: '/// <reference types="node" />',
  },
  // No `clean`: its declaration step deletes every .d.ts and .d.cts in the output directory when
  // it starts. `npm run build` empties dist/ before tsup instead.
  // Blanks minified, names and statements kept: a stack trace names the source's functions (its
  // line and column point into a long line), and the package is half the size it was. No source
  // maps: with their sourcesContent they were 60% of the package, for users of
  // --enable-source-maps alone.
  target: 'node20',
  splitting: true,
  minifyWhitespace: true,
  // otel/api.ts finds its own file by `__filename` (CommonJS) or `import.meta.url` (ESM): each
  // build gets the other's name defined, so neither warns (esbuild: "import.meta is not
  // available with cjs") and each takes the branch that is its own.
  shims: true,
}

export default defineConfig((flags) => [
  {
    ...LIBRARY,
    // One build of both formats: the declarations are made once for the two.
    format: ['esm', 'cjs'],
    // CommonJS chunks are made from ESM ones by a second transform that turns each class into an
    // anonymous class expression: keepNames gives the classes their names back (`Redlock.name`,
    // an error's class in a stack trace). ESM needs none (a bundler's output stays smaller).
    esbuildOptions(options, { format }) {
      if (format === 'cjs') options.keepNames = true
    },
    // node-redlock's shape (the footer), and the declarations that say so: `export = Redlock` in
    // redlock.d.cts (scripts/redlock-cjs-types.mjs).
    onSuccess: async () => {
      redlockCjsFooter(flags.outDir ?? 'dist')
      await rewriteRedlockCjsTypes(flags.outDir ?? 'dist', started)
    },
  },
  {
    // ESM only, like dist/index.js, which it imports.
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    target: 'node20',
    splitting: false,
    esbuildPlugins: [libraryFromDist],
  },
])
