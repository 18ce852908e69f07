import path from 'node:path'
import { defineConfig, type Options } from 'tsup'

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

export default defineConfig([
  {
    entry: { index: 'src/index.ts', otel: 'src/otel/index.ts', 'redis-semaphore': 'src/compat/redis-semaphore/index.ts' },
    format: ['esm', 'cjs'],
    dts: {
      // The declarations name Node's types (`node:diagnostics_channel`'s Channel, AsyncDisposable,
      // AbortSignal): a consumer whose tsconfig lists no @types (TypeScript 7's default, and
      // `tsc --init`'s `"types": []` since 5.9) still gets them, from the @types/node it has.
      banner: '/// <reference types="node" />',
    },
    // No `clean`: its declaration step deletes every .d.ts and .d.cts in the output directory when
    // it starts, and the redlock build below writes its own there at the same time (CI runs found
    // dist/redlock.d.ts and .d.cts missing). `npm run build` empties dist/ before tsup instead.
    // No source maps: the output is not minified (a stack trace points at readable code with the
    // source's names), and maps with their sourcesContent were 60% of the package, for users of
    // --enable-source-maps alone.
    target: 'node20',
    splitting: false,
  },
  {
    // node-redlock's drop-in: its own entry (its own copy of the library's code it uses, as
    // otel has). `require('fencelock/redlock')` is the class itself, as `require('redlock')` is,
    // with the named exports (and `default`) on it.
    entry: { redlock: 'src/compat/redlock/index.ts' },
    format: ['esm', 'cjs'],
    dts: { banner: '/// <reference types="node" />' },
    target: 'node20',
    splitting: false,
    footer: ({ format }) => (format === 'cjs' ? { js: 'module.exports = Object.assign(module.exports.default, module.exports);' } : {}),
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
