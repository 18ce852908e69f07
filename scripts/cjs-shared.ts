// The library modules that fencelock/otel imports (import-free: pure helpers, the error classes), for CommonJS (dist/shared.cjs, tsup.config.ts):
// dist/library.cjs and dist/otel.cjs both require them from here, so they are bundled once and
// `require('fencelock/otel')` loads none of the rest of the library (its events connect it to
// whichever copy of fencelock the application uses), as dist/otel.js imports one small chunk.
// By their path under src/: tsup.config.ts's SHARED lists the same, and the build of dist/otel.cjs
// refuses an import of any other library module.
import * as describeValue from '../src/errors/describe-value.js'
import * as errors from '../src/errors/errors.js'
import * as unknownOption from '../src/util/unknown-option.js'

export const modules = {
  'errors/describe-value': describeValue,
  'errors/errors': errors,
  'util/unknown-option': unknownOption,
}
