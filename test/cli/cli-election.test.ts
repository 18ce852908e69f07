// `fencelock leader` and `fencelock run --elect`, run as real processes against a real redis-server:
// the leader shown (text, JSON, none: exit 1), pushed changes with --watch, and a command run as
// the leader that is sent SIGTERM with exit 75 when the leadership is lost.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parseCommandLine, UsageError } from '../../src/cli/args.js'
import { describeRedis, useIoredis } from '../../harness/per-adapter.js'
import { uniquePrefix } from '../../harness/util.js'
import { nodeArgsFor } from '../../harness/prebuilt.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const cliPath = path.join(root, 'src', 'cli', 'main.ts')

/** Runs the CLI; `onStdout` sees its output so far as it comes. */
function cli(args: string[], onStdout?: (text: string, stop: () => void) => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env }
  delete env.REDIS_URL
  const child = spawn(process.execPath, [...nodeArgsFor(cliPath), ...args], { cwd: root, env })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
    onStdout?.(stdout, () => child.kill('SIGTERM'))
  })
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })))
}

describe('fencelock leader / run --elect: parsing', () => {
  it('reads leader and run --elect, and refuses --value without --elect', () => {
    expect(parseCommandLine(['leader', 'jobs', '--json', '--watch'])).toMatchObject({ name: 'leader', election: 'jobs', json: true, watch: true })
    expect(parseCommandLine(['run', '--elect', 'jobs', '--value', 'h1', '--', 'ls'])).toMatchObject({
      name: 'run',
      resource: 'jobs',
      hold: { kind: 'election', value: 'h1' },
      command: ['ls'],
    })
    expect(() => parseCommandLine(['run', 'r', '--value', 'x', '--', 'ls'])).toThrow(UsageError)
    expect(() => parseCommandLine(['run', '--elect', 'jobs', '--semaphore', '2', '--', 'ls'])).toThrow(UsageError)
  })
})

describeRedis('fencelock leader / run --elect', (server) => {
  const control = useIoredis(server)

  it('run --elect runs the command as leader (leader shows it, --watch sees it come and go); losing it sends SIGTERM and exits 75', async () => {
    const prefix = uniquePrefix('cli-elect')
    const common = ['--redis', server.url, '--prefix', prefix]
    expect(await cli(['leader', 'jobs', ...common])).toMatchObject({ code: 1, stdout: 'no leader\n' })
    const watched: string[] = []
    const watching = cli(['leader', 'jobs', '--json', '--watch', ...common], (text, stop) => {
      watched.splice(0, watched.length, ...text.trim().split('\n'))
      if (watched.length >= 2 && watched.at(-1) === 'null' && watched.some((line) => line.includes('host-a'))) stop()
    })
    const script = [
      process.execPath,
      '-e',
      "process.on('SIGTERM', () => { console.log('got SIGTERM'); process.exit(3) }); console.log('started ' + process.env.FENCELOCK_FENCE); setInterval(() => {}, 1000)",
    ]
    let shown: Awaited<ReturnType<typeof cli>> | undefined
    const run = cli(['run', '--elect', 'jobs', '--value', 'host-a', '--ttl', '1s', ...common, '--', ...script], (text) => {
      if (text.includes('started') && !shown) {
        shown = { code: null, stdout: '', stderr: '' }
        void cli(['leader', 'jobs', '--json', ...common]).then(async (r) => {
          shown = r
          // Someone else removes the term: the next renewal is refused and the leadership is lost.
          await control.client.del(`${prefix}{jobs}:E:L`)
        })
      }
    })
    const result = await run
    expect(result.code).toBe(75)
    expect(result.stdout).toContain('got SIGTERM')
    const fence = Number(/started (\d+)/.exec(result.stdout)?.[1])
    expect(JSON.parse(shown!.stdout)).toMatchObject({ value: 'host-a', fence })
    expect((await watching).code).toBe(0)
    // Pushed in order: vacant (if it started first), the leader, vacant again once the term was gone.
    const values = watched.map((line) => (JSON.parse(line) as { value: string } | null)?.value ?? null)
    expect(values.slice(-2)).toEqual(['host-a', null])
    expect(values.length === 2 || values[0] === null).toBe(true)
  }, 60_000)
})
