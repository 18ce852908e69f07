/**
 * Key names of a resource built once and kept in a cache: they would otherwise be rebuilt on every
 * call of the hot path. Two generations of `size` resources each, as a cheap stand-in for LRU: a
 * resource found in the older generation moves to the newer; when the newer is full it becomes the
 * older and the older is dropped. So a resource looked up again before `size` newer lookups have
 * filled a generation stays, while one-off resources pass through, with no bookkeeping per hit.
 *
 * Small on purpose: a generation of 4,096 kept a one-off resource's keys through thousands of
 * calls, long enough for V8 to move them to the old generation, which then filled with dropped keys
 * and needed a full collection (two per 20,000 acquire+release cycles on distinct resources, with
 * pauses of up to 8.5 ms; none with 256). Rebuilding the keys of a resource that fell out costs
 * about half a microsecond.
 */
export function keyCache<K>(prefix: string, make: (prefix: string, resource: string) => K, size = 256): (resource: string) => K {
  let current = new Map<string, K>()
  let previous = new Map<string, K>()
  return (resource) => {
    const found = current.get(resource)
    if (found !== undefined) return found
    const keys = previous.get(resource) ?? make(prefix, resource)
    if (current.size >= size) {
      previous = current
      current = new Map()
    }
    current.set(resource, keys)
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

/** CRC16-XMODEM of `bytes`, continuing from `crc` (the CRC of the bytes before them). */
export function crc16(bytes: Uint8Array, crc = 0): number {
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ CRC16[((crc >> 8) ^ byte) & 0xff]!
  return crc
}

/** The Redis Cluster slot (0..16383) of `key`: CRC16 of its hash tag (of its UTF-8 bytes). */
export function clusterSlot(key: string): number {
  return crc16(Buffer.from(hashTag(key), 'utf8')) & 0x3fff
}
