// The CommonJS build's one copy of the library (dist/library.cjs, tsup.config.ts): the exports of
// fencelock, fencelock/redlock and fencelock/redis-semaphore, each under a name of its own, bundled
// once. dist/index.cjs, dist/redlock.cjs and dist/redis-semaphore.cjs are each one line that
// requires this module and hands out their part of it; dist/otel.cjs bundles fencelock/otel's own
// modules and takes the library modules it imports from `modules` here. So an application that
// requires two entries loads the library once, and its classes are the same in both (`instanceof`
// holds across entries). Not an export of the package: only those four files require it.
import * as describeValue from '../src/errors/describe-value.js'
import * as unknownOption from '../src/util/unknown-option.js'

export * as main from '../src/index.js'
export * as redlock from '../src/compat/redlock/index.js'
export * as redisSemaphore from '../src/compat/redis-semaphore/index.js'

/**
 * The library modules that fencelock/otel imports, by their path under src/ (tsup.config.ts's
 * OTEL_IMPORTS, where the build of dist/otel.cjs refuses any other). fencelock/otel is a file of
 * its own, not a part of this module: it loads @opentelemetry/api (an optional peer) as it starts,
 * which `require('fencelock')` must not.
 */
export const modules = {
  'errors/describe-value': describeValue,
  'util/unknown-option': unknownOption,
}
