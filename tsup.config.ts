import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { defineConfig, type Options } from 'tsup'
import { dropUnreachedTypeChunks, reexportCjsTypes } from './scripts/declarations.mjs'
import { rewriteRedlockCjsTypes, rewriteRedlockEsmTypes } from './scripts/redlock-cjs-types.mjs'

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

/**
 * The CommonJS entries but fencelock/otel: each is one line that requires dist/library.cjs
 * (scripts/cjs-library.ts, the library bundled once for CommonJS) and hands out its part of it.
 * node-redlock's shape for fencelock/redlock: `require('fencelock/redlock')` is the class itself,
 * as `require('redlock')` is, with the named exports (and `default`) on it.
 */
const CJS_ENTRIES: Record<string, string> = {
  'index.cjs': 'Object.defineProperty(exports,"__esModule",{value:true});Object.assign(exports,require("./library.cjs").main);',
  'redis-semaphore.cjs': 'Object.defineProperty(exports,"__esModule",{value:true});Object.assign(exports,require("./library.cjs").redisSemaphore);',
  'redlock.cjs': 'const redlock=require("./library.cjs").redlock;module.exports=Object.assign(redlock.default,redlock);',
}

/**
 * The library modules (paths under src/, no extension) that fencelock/otel imports: bundled once
 * for CommonJS, into dist/shared.cjs (scripts/cjs-shared.ts), which dist/library.cjs and
 * dist/otel.cjs require.
 */
const SHARED = ['errors/describe-value', 'errors/errors', 'util/unknown-option']
const srcDir = path.resolve('src')
const otelDir = path.resolve('src/otel')
const sharedEntry = path.resolve('scripts/cjs-shared.ts')

/**
 * Takes each SHARED module from dist/shared.cjs (`require('./shared.cjs').modules[...]`) instead
 * of bundling it. With `only` (a folder), any other import that leaves the folder fails the build
 * instead of being copied: fencelock/otel loads no other library code.
 */
function takesShared(only?: string): Plugin {
  return {
    name: 'fencelock-takes-shared',
    setup(build) {
      build.onResolve({ filter: /^\.\/shared\.cjs$/, namespace: 'fencelock-shared' }, () => ({ path: './shared.cjs', external: true }))
      build.onResolve({ filter: /^\.\.?\// }, (args) => {
        // dist/shared.cjs itself (built beside dist/otel.cjs) bundles them.
        if (args.kind === 'entry-point' || args.importer === sharedEntry) return undefined
        const target = path.resolve(args.resolveDir, args.path).replace(/\.js$/, '')
        const module = path.relative(srcDir, target).split(path.sep).join('/')
        if (SHARED.includes(module)) return { path: module, namespace: 'fencelock-shared' }
        if (only === undefined || target.startsWith(only + path.sep)) return undefined
        const text = `${path.relative(process.cwd(), args.importer)} may import only its own folder and the SHARED modules (tsup.config.ts, scripts/cjs-shared.ts), got ${JSON.stringify(args.path)}`
        return { errors: [{ text }] }
      })
      build.onLoad({ filter: /.*/, namespace: 'fencelock-shared' }, (args) => ({
        contents: `module.exports = require("./shared.cjs").modules[${JSON.stringify(args.path)}]`,
        loader: 'js',
      }))
    },
  }
}

/** Writes the CommonJS entries (CJS_ENTRIES) into `dir`. */
function writeCjsEntries(dir: string): void {
  for (const [file, code] of Object.entries(CJS_ENTRIES)) writeFileSync(path.join(dir, file), `"use strict";${code}\n`)
}

/**
 * Gives each script binding of the ESM files (`var x=script({"name":"x.lua","source":joined(...),
 * ...})`) back the `/* @__PURE__ *\/` marks its source has (scripts/embed-lua.mjs), which esbuild
 * drops when it minifies blanks: without them a consumer's bundler keeps every script of a file it
 * bundles, used or not (the guards' scripts in a bundle of createLocks alone, every script of
 * dist/index.js in a bundle of fencedSet alone). The package test bundles each alone.
 */
function markScriptsPure(dir: string): void {
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.js') && f !== 'cli.js')) {
    const text = readFileSync(path.join(dir, file), 'utf8')
    const marked = text.replace(/=(script\d*)\(\{"name":"/g, '=/* @__PURE__ */$1({"name":"').replace(/"source":(joined\d*)\(/g, '"source":/* @__PURE__ */$1(')
    if (marked !== text) writeFileSync(path.join(dir, file), marked)
  }
}

const ENTRIES = {
  index: 'src/index.ts',
  otel: 'src/otel/index.ts',
  'redis-semaphore': 'src/compat/redis-semaphore/index.ts',
  redlock: 'src/compat/redlock/index.ts',
}

// Blanks minified, names and statements kept: a stack trace names the source's functions (its
// line and column point into a long line), and the package is half the size it was. No source
// maps: with their sourcesContent they were 60% of the package, for users of
// --enable-source-maps alone.
const JS: Options = {
  target: 'node20',
  minifyWhitespace: true,
  // otel/api.ts finds its own file by `__filename` (CommonJS) or `import.meta.url` (ESM): each
  // build gets the other's name defined, so neither warns (esbuild: "import.meta is not
  // available with cjs") and each takes the branch that is its own.
  shims: true,
  dts: false,
}

export default defineConfig((flags) => [
  {
    // The declarations of the four entries, for both formats (.d.ts, .d.cts), made once.
    entry: ENTRIES,
    format: ['esm', 'cjs'],
    target: 'node20',
    dts: {
      only: true,
      // The declarations name Node's types (`node:diagnostics_channel`'s Channel, AsyncDisposable,
      // AbortSignal): a consumer whose tsconfig lists no @types (TypeScript 7's default, and
      // `tsc --init`'s `"types": []` since 5.9) still gets them, from the @types/node it has.
      banner: '/// <reference types="node" />',
    },
    // No `clean`: its declaration step deletes every .d.ts and .d.cts in the output directory when
    // it starts. `npm run build` empties dist/ before tsup instead.
  },
  {
    // ESM: the entries share one copy of the library, the code they have in common in chunks
    // that each imports, so a bundler keeps only what the application uses.
    ...JS,
    entry: ENTRIES,
    format: ['esm'],
    splitting: true,
    onSuccess: async () => markScriptsPure(flags.outDir ?? 'dist'),
  },
  {
    // CommonJS: the library once, in dist/library.cjs, which each entry requires
    // (writeCjsEntries). No keepNames, as for ESM: a class or function keeps its own name unless
    // another of the same name was bundled first (redis-semaphore's internal `Lock` is `Lock2`
    // beside redlock's); the package test holds every exported class to its name.
    ...JS,
    entry: { library: 'scripts/cjs-library.ts' },
    format: ['cjs'],
    splitting: false,
    esbuildPlugins: [takesShared()],
    // Then the declarations: the CommonJS ones of fencelock/redlock say what the entry is,
    // `export = Redlock`, and its ESM ones re-export them (scripts/redlock-cjs-types.mjs); the
    // ESM ones of the other entries re-export their CommonJS twins, and the chunks no entry
    // reaches any more go (scripts/declarations.mjs).
    onSuccess: async () => {
      const dir = flags.outDir ?? 'dist'
      writeCjsEntries(dir)
      await Promise.all([
        rewriteRedlockCjsTypes(dir, started),
        rewriteRedlockEsmTypes(dir, started),
        reexportCjsTypes(dir, ['index', 'otel', 'redis-semaphore'], started),
      ])
      const declarations = Object.keys(ENTRIES).flatMap((name) => [`${name}.d.ts`, `${name}.d.cts`])
      await dropUnreachedTypeChunks(dir, declarations, started)
    },
  },
  {
    // For CommonJS, fencelock/otel's own modules, and the library modules it shares
    // (dist/shared.cjs).
    ...JS,
    entry: { otel: 'src/otel/index.ts', shared: sharedEntry },
    format: ['cjs'],
    splitting: false,
    esbuildPlugins: [takesShared(otelDir)],
  },
  {
    // ESM only, like dist/index.js, which it imports.
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    target: 'node20',
    minifyWhitespace: true,
    splitting: false,
    esbuildPlugins: [libraryFromDist],
  },
])
