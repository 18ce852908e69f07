// A duration given as a string is refused with a hint that works: a string of digits is told to be
// a number (milliseconds), a duration string is pointed to parseDuration only where that call
// reads it, and the redlock entry (which exports no parseDuration) never points there.
import { expect, it } from 'vitest'
import { InvalidArgumentError, parseDuration } from '../../src/index.js'
import Redlock from '../../src/compat/redlock/index.js'
import { describeRedis, perAdapter } from '../../harness/per-adapter.js'

/** The error `work` throws or rejects with. */
async function errorOf(work: () => unknown): Promise<Error> {
  try {
    await work()
  } catch (err) {
    return err as Error
  }
  throw new Error('expected an error')
}

/** Every `parseDuration(...)` a message suggests must itself read its argument. */
function suggestedCallsWork(message: string): void {
  for (const [, arg] of message.matchAll(/parseDuration\((['"][^'"]*['"])\)/g)) {
    expect(() => parseDuration(JSON.parse(arg!.replaceAll("'", '"')) as string), `suggested parseDuration(${arg})`).not.toThrow()
  }
}

describeRedis('duration hints', (server) => {
  perAdapter(
    server,
    (t) => {
      it("ttl: '5000' is told to be the number 5000, not sent to a parseDuration that refuses it", async () => {
        for (const work of [
          () => t.locks.acquire('hint-a', { ttl: '5000' as never }),
          () => t.locks.tryAcquire('hint-b', { ttl: '5000' as never }),
          () => t.locks.election('hint-c', { ttl: '5000' as never }),
        ]) {
          const err = await errorOf(work)
          expect(err).toBeInstanceOf(InvalidArgumentError)
          expect(err.message).toContain('got "5000"')
          expect(err.message).toMatch(/the number 5000/)
          expect(err.message).not.toMatch(/parseDuration\('5000'\)|parseDuration\("5000"\)/)
          suggestedCallsWork(err.message)
        }
      })

      it("wait: '30s' is pointed to parseDuration('30s'), which reads it", async () => {
        const err = await errorOf(() => t.locks.acquire('hint-d', { wait: '30s' as never }))
        expect(err).toBeInstanceOf(InvalidArgumentError)
        expect(err.message).toContain('parseDuration("30s")')
        suggestedCallsWork(err.message)
      })

      it('the redlock entry never suggests parseDuration, which it does not export', async () => {
        const redlock = new Redlock([t.client.raw], { retryCount: 0 })
        for (const ttl of ['5000', '5s']) {
          const err = await errorOf(() => redlock.lock('hint-e', ttl as never))
          expect(err).toBeInstanceOf(InvalidArgumentError)
          expect(err.message).toContain(`got "${ttl}"`)
          expect(err.message).not.toContain('parseDuration')
        }
      })
    },
    { prefix: 'hints' },
  )
})
