/**
 * Key names of a resource built once and kept in a small cache: they would otherwise be rebuilt on
 * every call of the hot path. Cleared wholesale when full, which is cheaper than LRU bookkeeping
 * per call. Each primitive supplies its own layout (`make`).
 */
export function keyCache<K>(prefix: string, make: (prefix: string, resource: string) => K, size = 1_000): (resource: string) => K {
  const cache = new Map<string, K>()
  return (resource) => {
    let keys = cache.get(resource)
    if (!keys) {
      if (cache.size >= size) cache.clear()
      keys = make(prefix, resource)
      cache.set(resource, keys)
    }
    return keys
  }
}

/** The part of `key` Redis Cluster hashes: the first non-empty `{...}`, else the whole key. */
export function hashTag(key: string): string {
  const open = key.indexOf('{')
  const close = open === -1 ? -1 : key.indexOf('}', open + 1)
  return close > open + 1 ? key.slice(open + 1, close) : key
}

/** True if every key surely maps to one cluster slot (they share their hash tag). */
export const sameSlot = (keys: readonly string[]): boolean => keys.every((k) => hashTag(k) === hashTag(keys[0]!))

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

/** CRC16-XMODEM table, as Redis Cluster's key hashing uses it. */
const CRC16 = (() => {
  const table = new Uint16Array(256)
  for (let i = 0; i < 256; i++) {
    let crc = i << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
    table[i] = crc
  }
  return table
})()

/** The Redis Cluster slot (0..16383) of `key`: CRC16 of its hash tag (of its UTF-8 bytes). */
export function clusterSlot(key: string): number {
  const bytes = Buffer.from(hashTag(key), 'utf8')
  let crc = 0
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ CRC16[((crc >> 8) ^ byte) & 0xff]!
  return crc & 0x3fff
}
