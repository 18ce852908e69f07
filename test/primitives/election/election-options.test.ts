// An election's and a campaign's options are checked as acquire's are: a misspelt name is refused
// (not silently replaced by the default), an option a term cannot honour is refused, the message
// names the call it belongs to; an empty leader value is refused; and an error of the election
// names the election, not the internal resource name its calls ride in.
import { expect, it } from 'vitest'
import { InvalidArgumentError, RedisError } from '../../../src/index.js'
import { describeRedis, perAdapter } from '../../../harness/per-adapter.js'
import { nameMaker } from '../../../harness/util.js'

describeRedis('election options', (server) => {
  perAdapter(
    server,
    (t) => {
      const name = nameMaker()

      it('a misspelt election option is refused with a suggestion, not replaced by the default', () => {
        const e = name('typo')
        expect(() => t.locks.election(e, { tll: 1_000 } as never)).toThrow(InvalidArgumentError)
        expect(() => t.locks.election(e, { tll: 1_000 } as never)).toThrow(/Unknown option `tll` in the election options: did you mean `ttl`\?/)
        expect(() => t.locks.election(e, { autoExtend: false } as never)).toThrow(/`autoExtend`/)
      })

      it('a campaign refuses a misspelt option naming the campaign, and refuses autoExtend', async () => {
        const election = t.locks.election(name('campaign'))
        const typo = election.campaign('v', { wiat: 100 } as never)
        await expect(typo).rejects.toBeInstanceOf(InvalidArgumentError)
        await expect(typo).rejects.toThrow(/Unknown option `wiat` in the campaign options: did you mean `wait`\?/)
        const extend = election.campaign('v', { autoExtend: false } as never)
        await expect(extend).rejects.toBeInstanceOf(InvalidArgumentError)
        await expect(extend).rejects.toThrow(/`autoExtend`.*always/)
        await expect(election.withLeadership('v', () => 1, { tll: 5 } as never)).rejects.toThrow(/`tll` in the campaign options/)
        expect(await election.leader()).toBeNull()
      })

      it('an empty leader value is refused, in a campaign and in a proclamation', async () => {
        const election = t.locks.election(name('empty'))
        const empty = election.campaign('')
        await expect(empty).rejects.toBeInstanceOf(InvalidArgumentError)
        await expect(empty).rejects.toThrow(/`value`.*non-empty.*got ""/)
        expect(await election.leader()).toBeNull()
        const term = await election.campaign('a', { ttl: 5_000 })
        await expect(term.proclaim('')).rejects.toThrow(/`value`.*non-empty.*got ""/)
        expect(await election.leader()).toMatchObject({ value: 'a', version: 0 })
        await term.resign()
      })

      it('leader() with Redis silent names the election, not an internal key', async () => {
        const e = name('silent')
        const locks = t.open({ ttl: 300 })
        await locks.election(e).leader() // connected and scripts loaded before the pause
        server.redis.pause()
        try {
          const leader = locks.election(e).leader()
          await expect(leader).rejects.toBeInstanceOf(RedisError)
          const message = String(await leader.catch((err: Error) => err.message))
          expect(message).toContain(`election "${e}"`)
          expect(message).not.toContain('["')
        } finally {
          server.redis.resume()
        }
      })
    },
    { prefix: 'elect-opts', end: 'disconnect' },
  )
})
