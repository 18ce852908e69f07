// A small seeded PRNG (mulberry32): the same seed gives the same fault schedule and the same
// worker choices, so a failing seed can be replayed.
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number
  pick<T>(items: readonly T[]): T
}

export function rng(seed: number): Rng {
  let a = seed >>> 0
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (items) => {
      if (items.length === 0) throw new Error('rng.pick: no items')
      return items[Math.floor(next() * items.length)]!
    },
  }
}
