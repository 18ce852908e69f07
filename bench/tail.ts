// `npm run bench:tail [-- --cycles 5000 --rounds 3]`: where the tail of a sequential acquire and
// release comes from. One process, one Redis, fencelock (the built package) and the seed article's
// SET NX PX + compare-and-delete, interleaved round by round. Each operation's time is split into
// its Redis round trip (the client's command handed to ioredis -> its reply read) and the rest
// (the library's own code); stalls (a round trip over 0.5 ms) are counted per second of the run,
// with those that overlapped a garbage collection (perf_hooks 'gc' entries).
import { randomUUID } from 'node:crypto'
import { PerformanceObserver, performance } from 'node:perf_hooks'
import { Redis } from 'ioredis'
import { fencelock } from './library.js'
import { startServer } from './redis.js'
import { fmt, percentile } from './stats.js'

const STALL_MS = 0.5

interface Sample {
  /** The whole call, ms. */
  readonly total: number
  /** Its Redis round trips, ms. */
  readonly trip: number
}

interface Round {
  readonly acquire: Sample[]
  readonly release: Sample[]
  /** Round trips over STALL_MS: when each began and how long it took. */
  readonly stalls: [start: number, ms: number][]
  gcs: [start: number, end: number][]
  ms: number
}

type Cycle = (key: string, timed: (op: 'acquire' | 'release', work: () => Promise<unknown>) => Promise<unknown>) => Promise<void>

function args(): { cycles: number; rounds: number } {
  const at = (name: string, fallback: number) => {
    const i = process.argv.indexOf(name)
    return i < 0 ? fallback : Number(process.argv[i + 1])
  }
  return { cycles: at('--cycles', 5_000), rounds: at('--rounds', 3) }
}

/** Times every command the client sends (handed over -> reply read); `sink` gets each. */
function instrument(redis: Redis, sink: (start: number, ms: number) => void): void {
  const send = redis.sendCommand.bind(redis)
  redis.sendCommand = ((command: { promise: Promise<unknown> }, stream?: unknown) => {
    const start = performance.now()
    command.promise.then(
      () => sink(start, performance.now() - start),
      () => {},
    )
    return (send as (c: unknown, s?: unknown) => unknown)(command, stream)
  }) as typeof redis.sendCommand
}

async function runRound(cycle: Cycle, redis: Redis, cycles: number): Promise<Round> {
  const round: Round = { acquire: [], release: [], stalls: [], gcs: [], ms: 0 }
  let trip = 0
  let recording = false
  instrumentSink = (start, ms) => {
    trip += ms
    if (recording && ms > STALL_MS) round.stalls.push([start, ms])
  }
  const timed = async (op: 'acquire' | 'release', work: () => Promise<unknown>) => {
    trip = 0
    const start = performance.now()
    await work()
    if (recording) round[op].push({ total: performance.now() - start, trip })
  }
  for (let i = 0; i < 500; i++) await cycle(`tail:warm:${randomUUID()}`, timed)
  const gcs: [number, number][] = []
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push([e.startTime, e.startTime + e.duration])
  })
  observer.observe({ entryTypes: ['gc'] })
  recording = true
  const start = performance.now()
  for (let i = 0; i < cycles; i++) await cycle(`tail:${randomUUID()}`, timed)
  round.ms = performance.now() - start
  recording = false
  await new Promise((resolve) => setImmediate(resolve))
  observer.disconnect()
  round.gcs = gcs
  await redis.flushall()
  return round
}

let instrumentSink: (start: number, ms: number) => void = () => {}

function report(label: string, rounds: Round[]): void {
  const all = (op: 'acquire' | 'release') => rounds.flatMap((r) => r[op])
  for (const op of ['acquire', 'release'] as const) {
    const samples = all(op)
    const p = (pick: (s: Sample) => number, q: number) => fmt(percentile(samples.map(pick), q))
    console.log(
      `${label} ${op}: total p50 ${p((s) => s.total, 50)} p99 ${p((s) => s.total, 99)} ms | round trip p50 ${p((s) => s.trip, 50)} p99 ${p((s) => s.trip, 99)} | own p50 ${p((s) => s.total - s.trip, 50)} p99 ${p((s) => s.total - s.trip, 99)}`,
    )
  }
  const stalls = rounds.flatMap((r) => r.stalls.map(([start, ms]) => ({ start, ms, gc: r.gcs.some(([a, b]) => a < start + ms && b > start) })))
  const seconds = rounds.reduce((s, r) => s + r.ms, 0) / 1_000
  const cycles = all('acquire').length
  const perSecond = fmt(stalls.length / seconds, 1)
  const perHundred = fmt((100 * stalls.length) / cycles, 2)
  const median = fmt(
    percentile(
      stalls.map((s) => s.ms),
      50,
    ),
  )
  const gcs = rounds.reduce((sum, r) => sum + r.gcs.length, 0)
  const duringGc = stalls.filter((s) => s.gc).length
  console.log(
    `${label}: ${stalls.length} round trips over ${STALL_MS} ms (${perSecond} per second, ${perHundred} per 100 cycles; median ${median} ms), ${duringGc} during a GC; ${gcs} GCs; cycle mean ${fmt((seconds * 1_000) / cycles)} ms`,
  )
}

async function main(): Promise<void> {
  const { cycles, rounds } = args()
  const server = await startServer()
  const redis = new Redis(server.url)
  instrument(redis, (start, ms) => instrumentSink(start, ms))
  const locks = fencelock.createLocks({ redis })
  redis.defineCommand('fencelockTailDel', {
    numberOfKeys: 1,
    lua: "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end",
  })
  const del = (redis as unknown as { fencelockTailDel(key: string, token: string): Promise<number> }).fencelockTailDel.bind(redis)
  const cyclesOf: Record<string, Cycle> = {
    fencelock: async (key, timed) => {
      let lease: Awaited<ReturnType<typeof locks.acquire>> | undefined
      await timed('acquire', async () => (lease = await locks.acquire(key, { ttl: 10_000 })))
      await timed('release', () => lease!.release())
    },
    seed: async (key, timed) => {
      const token = randomUUID()
      await timed('acquire', async () => await redis.set(key, token, 'PX', 10_000, 'NX'))
      await timed('release', async () => await del(key, token))
    },
  }
  const results: Record<string, Round[]> = { fencelock: [], seed: [] }
  for (let r = 0; r < rounds; r++) for (const name of Object.keys(cyclesOf)) results[name]!.push(await runRound(cyclesOf[name]!, redis, cycles))
  console.log(`tail: ${rounds} interleaved rounds of ${cycles} sequential cycles each, distinct keys, one Redis`)
  for (const [name, rs] of Object.entries(results)) report(name, rs)
  await locks.close()
  redis.disconnect()
  await server.stop()
}

await main()
