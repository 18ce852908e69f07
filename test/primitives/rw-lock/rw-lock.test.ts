// The read/write lock on one Redis, once per client adapter (issue 9): readers overlap, a writer is
// alone, a waiting writer keeps new readers out, a writer's release wakes the readers at the head at
// once, fences from one counter, each lease expires alone.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { createLocks, type Lease } from '../../../src/index.js'
import { adapters } from '../../../harness/clients.js'
import { closeQuietly, nameMaker, sleep, uniquePrefix, until } from '../../../harness/util.js'
import { describeRedis, perAdapter } from '../../../harness/per-adapter.js'

describeRedis('read/write lock', (server) => {
  it('a reader killed with -9 frees its share within its ttl: a writer gets in then', async () => {
    const prefix = uniquePrefix('rw-kill')
    const worker = fileURLToPath(new URL('../../../harness/workers/reader-worker.ts', import.meta.url))
    const child = spawn(process.execPath, ['--import', 'tsx', worker, server.url, prefix, 'table', '1500'], {
      cwd: fileURLToPath(new URL('../../../', import.meta.url)),
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const client = await adapters[0]!.connect(server.url)
    const locks = createLocks({ redis: client.raw, prefix })
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('reading') && resolve())
        child.on('exit', () => reject(new Error('reader worker exited before reading')))
      })
      expect(await locks.readWrite('table').tryWrite()).toBeNull()
      const killedAt = performance.now()
      child.kill('SIGKILL')
      const writer = await locks.readWrite('table').write({ wait: 5_000 })
      // Auto-extended every 500 ms: the read lease lives at most one ttl (1.5 s) after the kill.
      expect(performance.now() - killedAt).toBeLessThan(1_500 + 1_000)
      await writer.release()
    } finally {
      child.kill('SIGKILL')
      await closeQuietly([locks])
      await client.quit()
    }
  }, 30_000)

  perAdapter(
    server,
    (t) => {
      const name = nameMaker()

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
        await sleep(100)
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
        const reader = await t.locks.readWrite(rw).read({ ttl: 10_000 })
        const writing = t.other.readWrite(rw).write({ ttl: 10_000, wait: 8_000 })
        await until('the writer waits', async () => (await t.locks.readWrite(rw).inspect()).waiters === 1, { timeout: 3_000 })
        expect(await t.locks.readWrite(rw).tryRead(), 'a new reader would starve the writer').toBeNull()
        const laterReaders = [t.locks.readWrite(rw).read({ ttl: 5_000, wait: 8_000 }), t.other.readWrite(rw).read({ ttl: 5_000, wait: 8_000 })]
        await until('the readers wait behind the writer', async () => (await t.locks.readWrite(rw).inspect()).waiters === 3, { timeout: 3_000 })
        await reader.release()
        const w = await writing
        const releasedAt = performance.now()
        await w.release()
        const readers = await Promise.all(laterReaders)
        // The writer held for a 10 s ttl: without wake-ups the readers would wait for that.
        expect(performance.now() - releasedAt).toBeLessThan(1_000)
        const info = await t.locks.readWrite(rw).inspect()
        expect(info.readers).toHaveLength(2) // both inside at once
        await Promise.all(readers.map((r) => r.release()))
      })

      it('readers arriving every 20 ms and holding 100 ms each: a writer still gets in within about one reader hold time', async () => {
        const rw = name('stream')
        let stop = false
        const readers: Promise<void>[] = []
        const stream = (async () => {
          for (let i = 0; !stop && i < 200; i++) {
            readers.push(
              (i % 2 ? t.locks : t.other)
                .readWrite(rw)
                .withRead(() => sleep(100), { wait: 5_000 })
                .catch(() => {}),
            )
            await sleep(20)
          }
        })()
        await sleep(300) // the stream is flowing
        const started = performance.now()
        await t.locks.readWrite(rw).withWrite(() => {}, { wait: 5_000 })
        const waited = performance.now() - started
        stop = true
        await stream
        await Promise.all(readers)
        expect(waited, 'ms the writer waited').toBeLessThan(100 + 400)
      })

      it('a reader lease that is not extended expires alone (its holder died): the writer gets in after its ttl', async () => {
        const rw = name('expire')
        const dead: Lease = await t.locks.readWrite(rw).read({ ttl: 400 })
        const started = performance.now()
        const w = await t.other.readWrite(rw).write({ ttl: 5_000, wait: 3_000 })
        expect(performance.now() - started).toBeLessThan(400 + 500)
        expect(dead.held).toBe(false)
        await w.release()
      })

      it('release and extend by token (from another instance, as an operator would): the writer or a reader, and a waiter is woken', async () => {
        const rw = name('by-token')
        const w = await t.locks.readWrite(rw).write({ ttl: 5_000 })
        const reading = t.other.readWrite(rw).read({ ttl: 5_000, wait: 5_000 })
        await sleep(50)
        expect(await t.other.readWrite(rw).extend(w.token, 8_000)).toBe(true)
        expect((await t.other.readWrite(rw).inspect()).writer?.ttl).toBeGreaterThan(5_000)
        expect(await t.other.readWrite(rw).release('not-a-holder')).toBe(false)
        const released = performance.now()
        expect(await t.other.readWrite(rw).release(w.token)).toBe(true)
        const r = await reading
        expect(performance.now() - released, 'ms until the waiting reader got in').toBeLessThan(1_000)
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
