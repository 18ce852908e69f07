// A Redis "host" of its own: a network namespace joined to this one by a veth pair, with
// redis-server processes inside it, and a tc qdisc on both ends of the link that drops every
// packet (DESIGN.md, "Real parts": the fault proxy works on sockets; this cuts the wire, and TCP
// itself retransmits and recovers, as on a real network). The machines this runs on have no
// netem in their kernel, so the cut is a token bucket that no packet fits through.
// Needs root, `ip` and `tc` (Debian's iproute2).
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { pingRaw } from './redis-server.js'

export interface NetnsHost {
  /** The namespace's address, as seen from this one. */
  readonly ip: string
  /** Starts a redis-server inside the namespace; returns its port. */
  startRedis(): Promise<{ port: number; url: string; stop(): Promise<void> }>
  /** Drops every packet in both directions (established connections stay open and retransmit). */
  cut(): void
  /** Back to a clean link. */
  heal(): void
  /** Stops every redis-server started here and deletes the namespace (and with it the veth pair). */
  destroy(): Promise<void>
}

const run = (command: string, args: string[]) => execFileSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'] })

let available: string | undefined | null = null
/** Why network namespaces cannot be used here, or undefined when they can. */
export function netnsUnavailable(): string | undefined {
  if (available !== null) return available
  if (process.getuid?.() !== 0) available = 'network namespaces need root'
  else if (spawnSync('ip', ['-V'], { stdio: 'ignore' }).status !== 0) available = '`ip` was not found (apt-get install iproute2)'
  else if (spawnSync('tc', ['-V'], { stdio: 'ignore' }).status !== 0) available = '`tc` was not found (apt-get install iproute2)'
  else {
    const probe = `flprobe${process.pid % 100_000}`
    const made = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' })
    spawnSync('ip', ['netns', 'delete', probe], { stdio: 'ignore' })
    available = made.status === 0 ? undefined : `\`ip netns add\` failed: ${made.stderr.trim()}`
  }
  return available
}

/** For `describe.skipIf(!requireNetnsOrSkip())`: CI must never skip these silently. */
export function requireNetnsOrSkip(): boolean {
  const reason = netnsUnavailable()
  if (reason === undefined) return true
  if (process.env.CI === 'true') throw new Error(`[fencelock tests] ${reason}. In CI this is fatal: run as root with iproute2 installed.`)
  console.warn(`[fencelock tests] skipping the network-namespace suites: ${reason}.`)
  return false
}

let count = 0

export async function createNetnsHost(): Promise<NetnsHost> {
  const id = `${process.pid % 100_000}${++count}`
  const ns = `fl${id}`
  const outside = `flo${id}`
  const inside = `fli${id}`
  // A /30 of its own in 10.0.0.0/8, so parallel test files never share addresses.
  const net = randomInt(1 << 20) << 2
  const address = (n: number) => `10.${(net >> 16) & 255}.${(net >> 8) & 255}.${(net & 255) + n}`
  const hostIp = address(1)
  const ip = address(2)
  run('ip', ['netns', 'add', ns])
  const servers = new Set<ChildProcess>()
  const inNs = (command: string, args: string[]) => run('ip', ['netns', 'exec', ns, command, ...args])
  try {
    run('ip', ['link', 'add', outside, 'type', 'veth', 'peer', 'name', inside])
    run('ip', ['link', 'set', inside, 'netns', ns])
    run('ip', ['addr', 'add', `${hostIp}/30`, 'dev', outside])
    run('ip', ['link', 'set', outside, 'up'])
    inNs('ip', ['addr', 'add', `${ip}/30`, 'dev', inside])
    inNs('ip', ['link', 'set', inside, 'up'])
    inNs('ip', ['link', 'set', 'lo', 'up'])
  } catch (err) {
    spawnSync('ip', ['netns', 'delete', ns], { stdio: 'ignore' })
    spawnSync('ip', ['link', 'delete', outside], { stdio: 'ignore' })
    throw err
  }

  // tbf with a one-byte bucket: every packet is larger than the bucket, so every packet is dropped.
  const blackhole = ['tbf', 'rate', '8bit', 'burst', '1', 'limit', '1']
  return {
    ip,
    async startRedis() {
      for (let attempt = 0; ; attempt++) {
        const port = 20_000 + randomInt(40_000)
        // Protected mode off: clients come from the host side of the veth, not from loopback (the
        // namespace and its address exist only for this test).
        const child = spawn(
          'ip',
          ['netns', 'exec', ns, 'redis-server', '--port', String(port), '--bind', ip, '--protected-mode', 'no', '--save', '', '--appendonly', 'no'],
          {
            stdio: 'ignore',
          },
        )
        servers.add(child)
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
        let up = false
        for (let waited = 0; waited < 5_000 && child.exitCode === null && !up; waited += 50) {
          up = await pingRaw(port, ip, 200)
          if (!up) await new Promise((r) => setTimeout(r, 50))
        }
        const stop = async () => {
          if (child.exitCode === null) child.kill('SIGKILL')
          await exited
          servers.delete(child)
        }
        if (up) return { port, url: `redis://${ip}:${port}`, stop }
        await stop()
        if (attempt === 3) throw new Error(`redis-server did not start in namespace ${ns}`)
      }
    },
    cut() {
      run('tc', ['qdisc', 'replace', 'dev', outside, 'root', ...blackhole])
      inNs('tc', ['qdisc', 'replace', 'dev', inside, 'root', ...blackhole])
    },
    heal() {
      spawnSync('tc', ['qdisc', 'del', 'dev', outside, 'root'], { stdio: 'ignore' })
      spawnSync('ip', ['netns', 'exec', ns, 'tc', 'qdisc', 'del', 'dev', inside, 'root'], { stdio: 'ignore' })
    },
    async destroy() {
      await Promise.all(
        [...servers].map(async (child) => {
          const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())))
          child.kill('SIGKILL')
          await exited
        }),
      )
      spawnSync('ip', ['netns', 'delete', ns], { stdio: 'ignore' })
      spawnSync('ip', ['link', 'delete', outside], { stdio: 'ignore' })
    },
  }
}
