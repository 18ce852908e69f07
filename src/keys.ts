/**
 * Keys of one resource. They all share the hash tag `{resource}`, so every script runs on one
 * Redis Cluster slot. A `}` inside the name only shortens the tag, identically for every key of
 * that resource; the suffixes are distinct single letters, so two resources never share a key.
 */
export interface ResourceKeys {
  readonly lock: string
  readonly fence: string
  readonly queue: string
  readonly queueExpiry: string
  readonly channel: string
}

export function resourceKeys(prefix: string, resource: string): ResourceKeys {
  const base = `${prefix}{${resource}}:`
  return {
    lock: `${base}L`,
    fence: `${base}F`,
    queue: `${base}Q`,
    queueExpiry: `${base}X`,
    channel: `${base}W`,
  }
}

/**
 * `resourceKeys` with a small cache: key names would otherwise be rebuilt on every call of the
 * hot path. Cleared wholesale when full, which is cheaper than LRU bookkeeping per call.
 */
export function keyCache(prefix: string, size = 1_000): (resource: string) => ResourceKeys {
  const cache = new Map<string, ResourceKeys>()
  return (resource) => {
    let keys = cache.get(resource)
    if (!keys) {
      if (cache.size >= size) cache.clear()
      keys = resourceKeys(prefix, resource)
      cache.set(resource, keys)
    }
    return keys
  }
}

/**
 * A second key in the same cluster slot as `key`: if `key` has a hash tag, appending keeps it;
 * otherwise the whole of `key` becomes the tag (the slot of `{key}` is the slot of `key`).
 */
export function sameSlotKey(key: string, suffix: string): string {
  const open = key.indexOf('{')
  const close = open === -1 ? -1 : key.indexOf('}', open + 1)
  const tagged = open !== -1 && close > open + 1
  return tagged ? `${key}${suffix}` : `{${key}}${suffix}`
}
