// Lease timing under stress: renewals racing releases (DESIGN.md 9) and a client wall clock that
// jumps (DESIGN.md 4: safety never depends on Date).
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createLocks, type Lease, type Locks } from '../../src/index.js'
import { adapters, type TestClient } from '../../harness/clients.js'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { killAllWorkers, spawnWorker } from '../../harness/spawn.js'
import { closeQuietly, keysOf, pttl, sleep, uniquePrefix } from '../../harness/util.js'

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

describe('4. wall clock', () => {
  it('no Date.now() or new Date() in src/: time that decides safety is monotonic or Redis TIME', () => {
    const offenders: string[] = []
    const scanned: string[] = []
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name)
        if (entry.isDirectory()) walk(file)
        else if (/\.(ts|lua)$/.test(entry.name) && entry.name !== 'embedded.ts') {
          scanned.push(path.relative(SRC, file))
          readFileSync(file, 'utf8')
            .split('\n')
            .forEach((line, i) => {
              // A read of the wall clock (Date.now(), new Date() with no time given); a Date made from
              // a time Redis recorded (the CLI printing `since` as ISO 8601) reads no clock.
              if (/Date\.now\s*\(|new Date\b(?!\()|new Date\(\s*\)/.test(line)) offenders.push(`${path.relative(SRC, file)}:${i + 1}: ${line.trim()}`)
            })
        }
      }
    }
    walk(SRC)
    expect(scanned).toEqual(expect.arrayContaining(['runtime/lease.ts', 'api/locks.ts', 'runtime/wait.ts']))
    expect(offenders).toEqual([])
  })
})

describe.skipIf(!requireRedisOrSkip())('lease timing', () => {
  let redis: RedisProcess
  beforeAll(async () => {
    redis = await startRedis()
  })
  afterEach(killAllWorkers)
  afterAll(() => redis?.stop())

  describe.each(adapters)('$name', (adapter) => {
    let client: TestClient
    let locks: Locks
    beforeAll(async () => {
      client = await adapter.connect(redis.url)
    })
    afterEach(() => closeQuietly([locks]))
    afterAll(() => client?.quit())

    it('9. renewal racing release: released at random moments around renewals, the key is gone afterwards and stays gone', async () => {
      const prefix = uniquePrefix('renew-race')
      // A ttl below the 100 ms floor on purpose: renewals every 30 ms make the race frequent.
      locks = createLocks({ redis: client.raw, prefix, allowShortTtl: true })
      const ttl = 90 // renewal every 30 ms
      const problems: string[] = []
      const releasedWhileHeld: Lease[] = []
      for (let i = 0; i < 60; i++) {
        const resource = `race:${i % 4}`
        const lock = keysOf(prefix, resource).lock
        const lease = await locks.acquire(resource, { ttl, autoExtend: true, wait: 2_000 })
        await sleep(Math.random() * 2 * ttl) // a random moment around the renewals: time must pass
        const released = await lease.release()
        // Still inside its deadline after the release came back, so the key was alive in Redis when
        // the release ran (Redis keeps a key at least as long as the client trusts it): the release
        // must have found it. (Read after the release, not before: on a starved machine the release
        // itself can take longer than what was left.)
        if (!released && performance.now() < lease.deadline) problems.push(`#${i}: held lease's release returned false`)
        if (released) releasedWhileHeld.push(lease)
        const left = await pttl(client, lock)
        if (left !== -2) problems.push(`#${i}: PTTL ${left} right after release`)
        if ((await locks.inspect(resource)).held) problems.push(`#${i}: inspect says held right after release`)
      }
      // Any renewal still in flight has landed by now: none may bring a key back.
      await sleep(ttl)
      for (let r = 0; r < 4; r++) {
        const left = await pttl(client, keysOf(prefix, `race:${r}`).lock)
        if (left !== -2) problems.push(`race:${r}: PTTL ${left} after the loop`)
      }
      expect(problems).toEqual([])
      // A lease released while held is not "lost" afterwards: no late renewal reply aborts its signal.
      // (Under CPU starvation a renewal can come too late and be refused before the release: that
      // lease was really lost, and its release returned false.)
      expect(releasedWhileHeld.filter((l) => l.signal.aborted).map((l) => (l.signal.reason as Error).message)).toEqual([])
    })

    it('4. client wall clock jumps +1 h / -1 h while a lease is held: deadline, signal and extend behave exactly the same', async () => {
      const worker = spawnWorker('clock', adapter.name, redis.url, { prefix: uniquePrefix('clock'), resource: 'clock', ttl: 1_000 })
      const { checks } = (await worker.next('result', 20_000)) as unknown as { checks: Record<string, unknown> }
      expect(checks).toMatchObject({
        dateJumped: true,
        deadlineUnchangedAfterJump: true,
        heldAfterForwardJump: true,
        heldAfterWaitForward: true,
        heldAfterBackwardJump: true,
        lostReason: 'expired',
        autoExtendedThroughJumps: true,
        autoReleased: true,
      })
      const drift = Math.floor(1_000 * 0.01) + 2
      for (const name of ['remainingAfterForwardJump', 'remainingAfterBackwardJump']) {
        expect(checks[name], name).toBeGreaterThan(0)
        expect(checks[name], name).toBeLessThanOrEqual(1_000 - drift)
      }
      for (const way of ['Forward', 'Backward']) {
        const name = `extend${way}Validity`
        // Measured from just before extend() was called; extend() reads its own start a hair
        // later, or, on a loaded machine, after the worker was preempted between the two (7 Dec
        // 2026, a run beside a busy loop: 12.8 ms). So the window ends no later than one counted
        // from when extend() returned: an hour's jump of the wall clock would put it 3,600,000 ms
        // off. (That it is counted from before sending, not from the reply, is network-faults'
        // test with a delayed reply.)
        const took = checks[`extend${way}Took`] as number
        expect(checks[name], name).toBeGreaterThan(1_000 - drift - 100)
        expect(checks[name], `${name} (extend took ${took} ms)`).toBeLessThanOrEqual(1_000 - drift + took)
      }
      // Aborted at its monotonic deadline: not an hour early, not late.
      expect(checks.abortedAfterDeadlineBy).toBeGreaterThanOrEqual(-5)
      expect(checks.abortedAfterDeadlineBy).toBeLessThan(300)
      expect((await worker.exited).code).toBe(0)
    })
  })
})
