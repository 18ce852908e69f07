// The one reply limit of the hot path, for work that hands its outcome down instead of making a
// promise: the first of value, error and silence settles the result; a value after the silence
// goes to `late` (an acquire's late grant is released there), anything else later is dropped.
import { describe, expect, it } from 'vitest'
import { settleWithin } from '../../src/util/alarms.js'
import type { Into } from '../../src/util/into.js'

const reading = (late: unknown[] = []) => ({
  value: (v: number) => `value ${v}`,
  error: (e: unknown) => `error ${(e as Error).message}`,
  silent: () => 'silent',
  late: (v: number) => void late.push(v),
})

describe('settleWithin', () => {
  it('settles with the value read by settle.value, once: a later error or value is dropped', async () => {
    let into: Into<number> | undefined
    const late: unknown[] = []
    const result = settleWithin<number, string>((i) => (into = i), 1_000, 1_000, reading(late))
    into!.value(7)
    into!.error(new Error('after'))
    into!.value(8)
    expect(await result).toBe('value 7')
    expect(late).toEqual([])
  })

  it('settles with the error read by settle.error', async () => {
    const result = settleWithin<number, string>((into) => into.error(new Error('refused')), 1_000, 1_000, reading())
    expect(await result).toBe('error refused')
  })

  it('settles as silent when nothing came within ms; a value after that goes to late, an error nowhere', async () => {
    let into: Into<number> | undefined
    const late: unknown[] = []
    const started = performance.now()
    const result = await settleWithin<number, string>((i) => (into = i), 30, 30, reading(late))
    expect(result).toBe('silent')
    // Not silent before its 30 ms were up: a lower bound (1 ms for timer rounding).
    expect(performance.now() - started).toBeGreaterThanOrEqual(29)
    into!.value(9)
    into!.error(new Error('later'))
    expect(late).toEqual([9])
  })

  it('rejects with what start threw, and what a reading handler threw', async () => {
    const boom = new Error('boom')
    await expect(
      settleWithin<number, string>(
        () => {
          throw boom
        },
        1_000,
        1_000,
        reading(),
      ),
    ).rejects.toBe(boom)
    const throwing = {
      ...reading(),
      value: (): string => {
        throw boom
      },
    }
    await expect(settleWithin<number, string>((into) => into.value(1), 1_000, 1_000, throwing)).rejects.toBe(boom)
  })
})
