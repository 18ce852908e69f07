// examples/prometheus.ts against a harness-started redis-server: it serves /metrics in Prometheus'
// text format, and after some locking the fencelock series carry non-zero counts (acquired and
// timed-out acquires, contention, a lease lost by expiry, fenced writes accepted and refused,
// wait and hold histograms); no series is labelled by resource; SIGTERM stops it cleanly and it
// leaves no key behind.
import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireRedisOrSkip, startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { until } from '../../harness/util.js'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** `name{labels} value` lines of a Prometheus text exposition, as a map (comments left out). */
function samples(text: string): Map<string, number> {
  const map = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    map.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return map
}

const WANTED = [
  'fencelock_acquires_total{kind="mutex",outcome="acquired"}',
  'fencelock_acquires_total{kind="mutex",outcome="timeout"}',
  'fencelock_contention_total{kind="mutex",outcome="timeout"}',
  'fencelock_lost_total{kind="mutex",reason="expired"}',
  'fencelock_fenced_writes_total{accepted="true",operation="fencedSet"}',
  'fencelock_fenced_writes_total{accepted="false",operation="fencedSet"}',
  'fencelock_wait_duration_seconds_count{kind="mutex",outcome="acquired"}',
  'fencelock_wait_duration_seconds_count{kind="mutex",outcome="timeout"}',
  'fencelock_hold_duration_seconds_count{kind="mutex",outcome="released"}',
  'fencelock_hold_duration_seconds_count{kind="mutex",outcome="lost"}',
]

describe.skipIf(!requireRedisOrSkip())('examples/prometheus.ts', () => {
  let redis: RedisProcess
  let child: ChildProcess | undefined
  beforeAll(async () => {
    redis = await startRedis()
  })
  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await redis?.stop()
  })

  it('serves the fencelock metrics with non-zero counts after some locking, and stops cleanly on SIGTERM', async () => {
    const example = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'examples', 'prometheus.ts')], {
      cwd: root,
      env: { ...process.env, REDIS_URL: redis.url, PORT: '0' },
    })
    child = example
    let stdout = ''
    let stderr = ''
    example.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    example.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const exited = new Promise<number | null>((resolve) => example.once('exit', (code) => resolve(code)))

    await until('the example prints its /metrics address', () => /http:\/\/\S+\/metrics/.test(stdout) || example.exitCode !== null, {
      timeout: 20_000,
      every: 50,
    })
    const url = /http:\/\/\S+\/metrics/.exec(stdout)?.[0]
    expect(url, `stdout: ${stdout}\nstderr: ${stderr}`).toBeDefined()

    let text = ''
    let contentType: string | null = null
    let series = new Map<string, number>()
    // The workload overruns a lease about 0.5 s after the start; everything else comes sooner.
    await until(
      'every wanted series is above zero',
      async () => {
        const response = await fetch(url!)
        expect(response.status).toBe(200)
        contentType = response.headers.get('content-type')
        text = await response.text()
        series = samples(text)
        return WANTED.every((name) => (series.get(name) ?? 0) > 0)
      },
      { timeout: 15_000, every: 200 },
    ).catch((err: Error) => {
      throw new Error(`${err.message}; last scrape:\n${text}`)
    })

    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/)
    for (const type of [
      'fencelock_wait_duration_seconds histogram',
      'fencelock_hold_duration_seconds histogram',
      'fencelock_acquires_total counter',
      'fencelock_lost_total counter',
      'fencelock_contention_total counter',
      'fencelock_fenced_writes_total counter',
    ]) {
      expect(text).toContain(`# TYPE ${type}`)
    }
    // Counts agree with each other: every settled acquire is in the wait histogram once.
    expect(series.get('fencelock_wait_duration_seconds_count{kind="mutex",outcome="acquired"}')).toBe(
      series.get('fencelock_acquires_total{kind="mutex",outcome="acquired"}'),
    )
    expect(series.get('fencelock_contention_total{kind="mutex",outcome="timeout"}')).toBe(
      series.get('fencelock_acquires_total{kind="mutex",outcome="timeout"}'),
    )
    // A timed-out acquire waited its 40 ms budget (the workload's `wait`).
    const timeouts = series.get('fencelock_wait_duration_seconds_count{kind="mutex",outcome="timeout"}')!
    expect(series.get('fencelock_wait_duration_seconds_sum{kind="mutex",outcome="timeout"}')! / timeouts).toBeGreaterThanOrEqual(0.039)
    expect(text).not.toMatch(/resource=/) // cardinality: no label per resource

    const { status } = await fetch(url!.replace(/\/metrics$/, '/other'))
    expect(status).toBe(404)

    example.kill('SIGTERM')
    const killer = setTimeout(() => example.kill('SIGKILL'), 10_000)
    const code = await exited
    clearTimeout(killer)
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(await redis.cli('DBSIZE')).toBe('0') // its keys (locks, fences, data) are gone
  })
})
