// The CommonJS build's one copy of the library (dist/library.cjs, tsup.config.ts): the exports of
// fencelock, fencelock/redlock and fencelock/redis-semaphore, each under a name of its own, bundled
// once. dist/index.cjs, dist/redlock.cjs and dist/redis-semaphore.cjs are each one line that
// requires this module and hands out their part of it, so an application that requires two
// entries loads the library once, and its classes are the same in both (`instanceof` holds across
// entries). The modules it shares with fencelock/otel come from dist/shared.cjs
// (scripts/cjs-shared.ts). Not an export of the package: only those files require it.
export * as main from '../src/index.js'
export * as redlock from '../src/compat/redlock/index.js'
export * as redisSemaphore from '../src/compat/redis-semaphore/index.js'
