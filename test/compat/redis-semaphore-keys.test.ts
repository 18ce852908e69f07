// Where the redis-semaphore drop-in keeps its own state: beside the peer's key, in its cluster
// slot. A name with a `}` but no hash tag (`mutex:a}b`) cannot be wrapped in braces, so a counter
// is appended until the key falls in the same slot: the first such counter, always the same one
// (every fencelock process must find the same key), found without re-hashing the whole key ~16,384
// times on every acquire (a cluster test under a busy loop timed out on that search alone).
import { describe, expect, it } from 'vitest'
import { besideKey, keySlot } from '../../src/compat/redis-semaphore/keys.js'

/** The counter search as the layout defines it: the first `i` whose whole key is in the peer's slot. */
function firstBeside(peer: string, suffix: string): string {
  const slot = keySlot(peer)
  for (let i = 0; ; i++) if (keySlot(`${peer}${suffix}:${i}`) === slot) return `${peer}${suffix}:${i}`
}

describe('redis-semaphore drop-in: keys beside the peer key', () => {
  it.each(['mutex:a}b', 'semaphore:}', 'x}{y', '{}z', 'ümlaut}key', 'a{b}'.replace('{b', '{'), 'rw:}}}'])(
    '%s: the first counter that lands in its slot',
    (peer) => {
      for (const suffix of [':fencelock:F', ':fencelock:Q', ':fencelock:X', ':fencelock:W', ':fencelock:H', ':fencelock:U']) {
        const key = besideKey(peer, suffix)
        expect(key).toBe(firstBeside(peer, suffix))
        expect(keySlot(key)).toBe(keySlot(peer))
      }
    },
  )

  it('tagged and plain names keep their shapes', () => {
    expect(besideKey('{tag}rest', ':fencelock:F')).toBe('{tag}rest:fencelock:F')
    expect(besideKey('mutex:plain', ':fencelock:F')).toBe('{mutex:plain}:fencelock:F')
  })

  it('finds each awkward key once: 2,000 look-ups of 50 names hash each name and suffix once, not 16,384 times each', () => {
    const names = Array.from({ length: 50 }, (_, i) => `cache:${i}}x`)
    const first = names.map((n) => besideKey(n, ':fencelock:F'))
    const counted = { calls: 0 }
    const hashing = keySlotCalls(counted)
    try {
      for (let round = 0; round < 40; round++) for (const [i, n] of names.entries()) expect(besideKey(n, ':fencelock:F')).toBe(first[i])
    } finally {
      hashing.restore()
    }
    expect(counted.calls).toBe(0)
  })
})

/** Counts the slot computations of the key search from here on (the module's CRC of whole keys). */
function keySlotCalls(counted: { calls: number }): { restore(): void } {
  const original = Buffer.from
  Buffer.from = function (this: unknown, ...args: unknown[]) {
    if (typeof args[0] === 'string' && (args[0] as string).startsWith('cache:')) counted.calls++
    return (original as (...a: unknown[]) => Buffer).apply(Buffer, args)
  } as typeof Buffer.from
  return { restore: () => void (Buffer.from = original) }
}
