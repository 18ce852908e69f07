// The key-name cache of the hot path: a resource's keys are built once and found again while the
// resource stays in use, also when many other resources pass through (each used once) and when
// more resources are in use than one generation of the cache holds.
import { describe, expect, it } from 'vitest'
import { keyCache } from '../../src/util/keys.js'

function counted(size: number) {
  const made: string[] = []
  const keysOf = keyCache('p', (prefix, resource) => (made.push(resource), { lock: `${prefix}:${resource}` }), size)
  return { keysOf, made }
}

describe('keyCache', () => {
  it('builds a resource keys once and hands out the same object again', () => {
    const { keysOf, made } = counted(4)
    const first = keysOf('a')
    expect(first).toEqual({ lock: 'p:a' })
    expect(keysOf('a')).toBe(first)
    expect(made).toEqual(['a'])
  })

  it('keeps the resources in use while one-off resources pass through, more than the cache holds', () => {
    const { keysOf, made } = counted(4)
    for (let round = 0; round < 10; round++) {
      for (const r of ['a', 'b', 'c', 'd']) keysOf(r)
      keysOf(`once-${round}`)
    }
    // Each of the four in use built once; each one-off once.
    expect(made.filter((r) => !r.startsWith('once-'))).toEqual(['a', 'b', 'c', 'd'])
    expect(made.filter((r) => r.startsWith('once-'))).toHaveLength(10)
  })

  it('keeps 40 resources in use with a one-off resource after every use (cache of 100)', () => {
    const { keysOf, made } = counted(100)
    const inUse = Array.from({ length: 40 }, (_, i) => `r${i}`)
    let uses = 0
    for (let round = 0; round < 20; round++) {
      for (const r of inUse) {
        keysOf(r)
        keysOf(`once-${uses++}`)
      }
    }
    expect(made.filter((r) => !r.startsWith('once-'))).toHaveLength(40)
    expect(made.filter((r) => r.startsWith('once-'))).toHaveLength(800)
  })
})
