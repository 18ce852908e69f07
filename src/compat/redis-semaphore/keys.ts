// Where fencelock keeps its own state of a redis-semaphore lock: beside the peer's key, in the
// same Redis Cluster slot, so that one script reads and writes both.

/** The part of `key` that Redis Cluster hashes: the first non-empty `{...}`, else the whole key. */
export function hashPart(key: string): string {
  const open = key.indexOf('{')
  if (open === -1) return key
  const close = key.indexOf('}', open + 1)
  return close === -1 || close === open + 1 ? key : key.slice(open + 1, close)
}

/** CRC16-XMODEM of the UTF-8 bytes, as Redis Cluster computes key slots. */
function crc16(text: string): number {
  let crc = 0
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  }
  return crc
}

/** The cluster slot of `key`. */
export const keySlot = (key: string): number => crc16(hashPart(key)) % 16384

/**
 * A key named `peer` + `suffix` in `peer`'s cluster slot. A peer key with a hash tag keeps it (the
 * suffix comes after it); one without becomes the hash tag (`{mutex:name}:fencelock:F`, the
 * `{key}` trick); one that has a `}` but no tag (`mutex:a}b`) cannot be wrapped, so a counter is
 * appended until the name falls in the same slot (about 16,384 tries, once per key).
 */
export function besideKey(peer: string, suffix: string): string {
  if (hashPart(peer) !== peer) return `${peer}${suffix}`
  if (!peer.includes('}')) return `{${peer}}${suffix}`
  const slot = keySlot(peer)
  for (let i = 0; ; i++) {
    const key = `${peer}${suffix}:${i}`
    if (keySlot(key) === slot) return key
  }
}
