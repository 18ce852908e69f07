// How a value appears in an error message, for the library and for fencelock/otel alike: as a
// reader would write it (JSON-like, so `{ tll: 5000 }` shows as {"tll":5000}), short, and never
// `[object Object]`. Pure and import-free, so the otel entry can share it without loading any
// library code.

/** Longest description of one value, in characters (a longer one ends in `…`). */
const MAX_LENGTH = 80
/** Items of an array and entries of an object shown before `…`. */
const MAX_ITEMS = 5
/** Nesting shown before `[…]` / `{…}`. */
const MAX_DEPTH = 2

const article = (word: string): string => (/^[aeiou]/i.test(word) ? 'an' : 'a')

function describe(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)
    case 'bigint':
      return `${value}n`
    case 'symbol':
      return value.toString()
    case 'function':
      return `a function${value.name ? ` (${value.name})` : ''}`
    case 'object':
      if (value === null) return 'null'
      if (Array.isArray(value)) {
        if (depth >= MAX_DEPTH) return value.length === 0 ? '[]' : '[…]'
        const items = value.slice(0, MAX_ITEMS).map((item: unknown) => describe(item, depth + 1))
        return `[${items.join(',')}${value.length > MAX_ITEMS ? ',…' : ''}]`
      }
      return describeObject(value, depth)
    default:
      // number (NaN, Infinity, -5), boolean, undefined
      return String(value)
  }
}

function describeObject(value: object, depth: number): string {
  const proto = Object.getPrototypeOf(value) as object | null
  if (proto !== null && proto !== Object.prototype) {
    // A class instance: its class says more than its fields (a client, a Map, an AbortController).
    // A constructor that does not own the prototype was mixed in (ioredis copies EventEmitter's): not the class.
    const ctor = proto.constructor as { name?: unknown; prototype?: unknown } | undefined
    const name = ctor?.prototype === proto ? ctor.name : undefined
    const shown = typeof name === 'string' && name !== '' ? `${article(name)} ${name}` : 'an object'
    if (value instanceof Error) return `${shown} (${describe(value.message, MAX_DEPTH)})`
    if (value instanceof Date) return `${shown} (${Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString()})`
    return shown
  }
  const keys = Object.keys(value)
  if (keys.length === 0) return '{}'
  if (depth >= MAX_DEPTH) return '{…}'
  const entries = keys.slice(0, MAX_ITEMS).map((key) => `${JSON.stringify(key)}:${describe((value as Record<string, unknown>)[key], depth + 1)}`)
  return `{${entries.join(',')}${keys.length > MAX_ITEMS ? ',…' : ''}}`
}

/** `value` as it should appear in an error message: JSON-like, at most 80 characters. */
export function describeValue(value: unknown): string {
  let text: string
  try {
    text = describe(value, 0)
  } catch {
    // A getter or proxy that throws while being described: the message must still be built.
    text = 'a value that cannot be shown'
  }
  return text.length > MAX_LENGTH ? `${text.slice(0, MAX_LENGTH - 1)}…` : text
}
