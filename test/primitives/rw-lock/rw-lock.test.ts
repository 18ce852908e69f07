// The read/write lock on one Redis, once per client adapter (issue 9): readers overlap, a writer is
// alone, a waiting writer keeps new readers out, a writer's release wakes the readers at the head at
// once, fences from one counter, each lease expires alone.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, it, onTestFinished } from 'vitest'
import { createLocks, type Lease } from '../../../src/index.js'
import { adapters } from '../../../harness/clients.js'
import { recordAcquires } from '../../../harness/telemetry.js'
import { closeQuietly, nameMaker, sleep, uniquePrefix, until } from '../../../harness/util.js'
import { describeRedis, perAdapter } from '../../../harness/per-adapter.js'
import { nodeArgsFor } from '../../../harness/prebuilt.js'

describeRedis('read/write lock', (server) => {
  it('a reader killed with -9 frees its share within its ttl: a writer gets in then', async () => {
    const prefix = uniquePrefix('rw-kill')
    const worker = fileURLToPath(new URL('../../../harness/workers/reader-worker.ts', import.meta.url))
    const child = spawn(process.execPath, [...nodeArgsFor(worker), server.url, prefix, 'table', '1500'], {
      cwd: fileURLToPath(new URL('../../../', import.meta.url)),
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const client = await adapters[0]!.connect(server.url)
    const locks = createLocks({ redis: client.raw, prefix })
    const acquires = recordAcquires()
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('reading') && resolve())
        child.on('exit', () => reject(new Error('reader worker exited before reading')))
      })
      expect(await locks.readWrite('table').tryWrite()).toBeNull()
      child.kill('SIGKILL')
      const writer = await locks.readWrite('table').write({ wait: 5_000 })
      // Nobody released the read lease: the writer got in at its first re-check, which the dead
      // reader's remaining ttl bounds (auto-extended every 500 ms, it lives at most one ttl, 1.5 s, after the kill).
      const wakes = acquires.of('table').find((e) => e.token === writer.token)!.wakes
      expect(wakes).not.toContain('release')
      expect(wakes.filter((why) => why === 'recheck')).toEqual(['recheck'])
      expect(wakes.at(-1)).toBe('recheck')
      await writer.release()
    } finally {
      acquires.stop()
      child.kill('SIGKILL')
      await closeQuietly([locks])
      await client.quit()
    }
  }, 30_000)

  perAdapter(
    server,
    (t) => {
      const name = nameMaker()
      /** The wake-up channels subscribed for `rw` (one per instance that waits for it). */
      const wakeChannels = async (rw: string) => ((await t.client.command('PUBSUB', 'CHANNELS', `${t.prefix}{${rw}}:R:W:*`)) as unknown[]).length

      it('readers overlap; a writer waits for them and then holds alone, with a larger fence than every reader', async () => {
        const rw = name('basic')
        const r1 = await t.locks.readWrite(rw).read({ ttl: 5_000 })
        const r2 = await t.other.readWrite(rw).read({ ttl: 5_000 })
        expect(r2.fence).toBeGreaterThan(r1.fence)
        expect(await t.locks.readWrite(rw).tryWrite()).toBeNull()
        const info = await t.locks.readWrite(rw).inspect()
        expect(info.readers.map((r) => r.token).sort()).toEqual([r1.token, r2.token].sort())
        expect(info.writer).toBeNull()
        const writing = t.other.readWrite(rw).write({ ttl: 5_000, wait: 5_000 })
        await until('the writer waits', async () => (await t.locks.readWrite(rw).inspect()).waiters === 1, { timeout: 3_000 })
        await r1.release()
        expect(
          await t.locks
            .readWrite(rw)
            .inspect()
            .then((i) => i.writer),
        ).toBeNull() // r2 still reads
        await r2.release()
        const w = await writing
        expect(w.fence).toBeGreaterThan(r2.fence)
        expect(await t.locks.readWrite(rw).tryRead()).toBeNull()
        expect(await t.locks.readWrite(rw).tryWrite()).toBeNull()
        await w.release()
        const r3 = (await t.locks.readWrite(rw).tryRead())!
        expect(r3.fence).toBeGreaterThan(w.fence)
        await r3.release()
      })

      it('a waiting writer keeps new readers out; its release wakes every reader at the head at once', async () => {
        const rw = name('order')
        const acquires = recordAcquires()
        onTestFinished(() => acquires.stop())
        const reader = await t.locks.readWrite(rw).read({ ttl: 10_000 })
        const writing = t.other.readWrite(rw).write({ ttl: 10_000, wait: 8_000 })
        await until('the writer waits', async () => (await t.locks.readWrite(rw).inspect()).waiters === 1, { timeout: 3_000 })
        expect(await t.locks.readWrite(rw).tryRead(), 'a new reader would starve the writer').toBeNull()
        const laterReaders = [t.locks.readWrite(rw).read({ ttl: 5_000, wait: 8_000 }), t.other.readWrite(rw).read({ ttl: 5_000, wait: 8_000 })]
        await until('the readers wait behind the writer', async () => (await t.locks.readWrite(rw).inspect()).waiters === 3, { timeout: 3_000 })
        await until('both instances listen for wake-ups', async () => (await wakeChannels(rw)) === 2, { timeout: 3_000 })
        await reader.release()
        const w = await writing
        await w.release()
        const readers = await Promise.all(laterReaders)
        // The writer held for a 10 s ttl: each reader went in on an attempt that the writer's
        // release sent, not on a re-check at that ttl.
        for (const r of readers) {
          const wakes = acquires.of(rw).find((e) => e.token === r.token)!.wakes
          // (or its look once its channel was active, where that came after the release: also an event)
          expect(['release', 'subscribed']).toContain(wakes.at(-1))
          expect(wakes).not.toContain('recheck')
        }
        const info = await t.locks.readWrite(rw).inspect()
        expect(info.readers).toHaveLength(2) // both inside at once
        await Promise.all(readers.map((r) => r.release()))
      })

      it('readers arriving every 20 ms and holding 100 ms each: a writer still gets in within about one reader hold time', async () => {
        const rw = name('stream')
        const acquires = recordAcquires()
        onTestFinished(() => acquires.stop())
        let stop = false
        let writerCalled = false
        let writerIn = false
        let entered = 0
        // Readers that arrived after the writer asked and still got in before it: a waiting writer
        // keeps new readers out, so it waits only for those inside (about one hold time), not for the stream.
        let overtakers = 0
        const readers: Promise<void>[] = []
        const stream = (async () => {
          for (let i = 0; !stop && i < 200; i++) {
            const afterWriter = writerCalled
            readers.push(
              (i % 2 ? t.locks : t.other)
                .readWrite(rw)
                .withRead(
                  () => {
                    entered++
                    if (afterWriter && !writerIn) overtakers++
                    return sleep(100) // the workload: each reader holds 100 ms
                  },
                  { wait: 5_000 },
                )
                .catch(() => {}),
            )
            await sleep(20) // the workload: a reader arrives every 20 ms
          }
        })()
        await until('the stream is flowing', () => entered >= 3, { timeout: 3_000 })
        writerCalled = true
        const writer = await t.locks.readWrite(rw).withWrite((lease) => ((writerIn = true), lease.token), { wait: 5_000 })
        stop = true
        await stream
        await Promise.all(readers)
        expect(overtakers, 'readers that came after the writer and got in before it').toBe(0)
        // It went in on a wake-up, not on a re-check at the readers' ttl: a reader's release, or
        // (when one came before its wake-up channel was active) the look it takes once it is.
        const wakes = acquires.of(rw).find((e) => e.token === writer)!.wakes
        expect(['release', 'subscribed']).toContain(wakes.at(-1))
        expect(wakes).not.toContain('recheck')
      })

      it('a reader lease that is not extended expires alone (its holder died): the writer gets in after its ttl', async () => {
        const rw = name('expire')
        const acquires = recordAcquires()
        onTestFinished(() => acquires.stop())
        const dead: Lease = await t.locks.readWrite(rw).read({ ttl: 400 })
        const w = await t.other.readWrite(rw).write({ ttl: 5_000, wait: 3_000 })
        // Nobody released the reader: the writer got in at its first re-check, which the reader's
        // remaining ttl (at most 400 ms) bounds.
        const wakes = acquires.of(rw).find((e) => e.token === w.token)!.wakes
        expect(wakes).not.toContain('release')
        expect(wakes.filter((why) => why === 'recheck')).toEqual(['recheck'])
        expect(wakes.at(-1)).toBe('recheck')
        expect(dead.held).toBe(false)
        await w.release()
      })

      it('release and extend by token (from another instance, as an operator would): the writer or a reader, and a waiter is woken', async () => {
        const rw = name('by-token')
        const acquires = recordAcquires()
        onTestFinished(() => acquires.stop())
        const w = await t.locks.readWrite(rw).write({ ttl: 5_000 })
        const reading = t.other.readWrite(rw).read({ ttl: 5_000, wait: 5_000 })
        await until('the reader waits', async () => (await t.other.readWrite(rw).inspect()).waiters === 1, { timeout: 3_000 })
        await until('it listens for wake-ups', async () => (await wakeChannels(rw)) === 1, { timeout: 3_000 })
        expect(await t.other.readWrite(rw).extend(w.token, 8_000)).toBe(true)
        expect((await t.other.readWrite(rw).inspect()).writer?.ttl).toBeGreaterThan(5_000)
        expect(await t.other.readWrite(rw).release('not-a-holder')).toBe(false)
        expect(await t.other.readWrite(rw).release(w.token)).toBe(true)
        const r = await reading
        // The release by token woke the waiting reader: not the re-check at the writer's 8 s ttl.
        const wakes = acquires.of(rw).find((e) => e.token === r.token)!.wakes
        // (or its look once its channel was active, where that came after the release: also an event)
        expect(['release', 'subscribed']).toContain(wakes.at(-1))
        expect(wakes).not.toContain('recheck')
        await expect(w.extend()).rejects.toMatchObject({ code: 'LOCK_LOST' })
        expect(await t.locks.readWrite(rw).extend(r.token, 6_000)).toBe(true)
        expect(await t.locks.readWrite(rw).release(r.token)).toBe(true)
        expect(await t.locks.readWrite(rw).release(r.token)).toBe(false)
        expect(await t.locks.readWrite(rw).extend(r.token)).toBe(false)
        const info = await t.locks.readWrite(rw).inspect()
        expect(info.writer).toBeNull()
        expect(info.readers).toEqual([])
      })

      it('withRead and withWrite run fn and release; a read/write lock and a mutex of the same name are independent', async () => {
        const rw = name('with')
        const lock = await t.locks.acquire(rw, { ttl: 5_000 })
        expect(await t.locks.readWrite(rw).withWrite((l) => l.fence)).toBeGreaterThan(0)
        expect(await t.locks.readWrite(rw).withRead((l) => l.fence)).toBeGreaterThan(0)
        const info = await t.locks.readWrite(rw).inspect()
        expect(info.writer).toBeNull()
        expect(info.readers).toEqual([])
        await lock.release()
      })
    },
    { prefix: 'rw' },
  )
})
