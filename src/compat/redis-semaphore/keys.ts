// Where fencelock keeps its own state of a redis-semaphore lock: beside the peer's key, in the
// same Redis Cluster slot, so that one script reads and writes both.
import { crc16 } from '../../util/keys.js'

/** The part of `key` that Redis Cluster hashes: the first non-empty `{...}`, else the whole key. */
export function hashPart(key: string): string {
  const open = key.indexOf('{')
  if (open === -1) return key
  const close = key.indexOf('}', open + 1)
  return close === -1 || close === open + 1 ? key : key.slice(open + 1, close)
}

/** The cluster slot of `key`. */
export const keySlot = (key: string): number => crc16(Buffer.from(hashPart(key), 'utf8')) % 16384

/** Keys found by the counter search (below), by suffix and peer; the oldest go first past the bound. */
const found = new Map<string, string>()
const FOUND_MAX = 10_000

/**
 * A key named `peer` + `suffix` in `peer`'s cluster slot. A peer key with a hash tag keeps it (the
 * suffix comes after it); one without becomes the hash tag (`{mutex:name}:fencelock:F`, the
 * `{key}` trick); one that has a `}` but no tag (`mutex:a}b`) cannot be wrapped, so a counter is
 * appended until the name falls in the same slot: the first such counter (about 16,384 tries),
 * found once per name and suffix. Such a key has no tag either (the suffix and counter hold no
 * brace), so its slot is the CRC of the whole key: the CRC of `peer + suffix + ':'` is computed
 * once and continued over each counter's digits.
 */
export function besideKey(peer: string, suffix: string): string {
  if (hashPart(peer) !== peer) return `${peer}${suffix}`
  if (!peer.includes('}')) return `{${peer}}${suffix}`
  const name = `${suffix}\u0000${peer}`
  const known = found.get(name)
  if (known !== undefined) return known
  const slot = keySlot(peer)
  const prefix = crc16(Buffer.from(`${peer}${suffix}:`, 'utf8'))
  let i = 0
  while (crc16(Buffer.from(String(i), 'latin1'), prefix) % 16384 !== slot) i++
  const key = `${peer}${suffix}:${i}`
  if (found.size >= FOUND_MAX) found.delete(found.keys().next().value!)
  found.set(name, key)
  return key
}
