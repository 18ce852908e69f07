// @opentelemetry/api, loaded so that its absence is a typed error instead of a raw
// ERR_MODULE_NOT_FOUND from the module linker: it is an optional peer dependency, so an
// application that imports fencelock/otel without installing it must be told what to install.
import { createRequire } from 'node:module'
import type * as OpenTelemetry from '@opentelemetry/api'
import { MissingDependencyError } from '../errors/errors.js'

/**
 * Synchronous, so `instrument()` stays synchronous: the ESM build resolves it from its own file
 * (import.meta.url), the CommonJS build with its own `require`. @opentelemetry/api resolves to one
 * CommonJS file for both `import` and `require`, so this is the instance the application imports.
 */
function load(): typeof OpenTelemetry {
  const from = typeof __filename === 'string' ? __filename : import.meta.url
  try {
    return createRequire(from)('@opentelemetry/api') as typeof OpenTelemetry
  } catch (err) {
    if ((err as { code?: unknown }).code === 'MODULE_NOT_FOUND' && String((err as Error).message).includes("'@opentelemetry/api'")) {
      throw new MissingDependencyError(
        '@opentelemetry/api',
        'fencelock/otel needs @opentelemetry/api (an optional peer dependency of fencelock): npm install @opentelemetry/api',
        err,
      )
    }
    throw err
  }
}

export const api = load()
