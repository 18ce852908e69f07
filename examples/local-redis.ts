// A throwaway redis-server for the examples: a free port, no persistence, a temp dir, stopped
// afterwards. The examples ship with the package, so they cannot lean on the test harness.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'

export interface LocalRedis {
  url: string
  stop(): Promise<void>
}

export const INSTALL_HINT = `redis-server was not found on PATH. Install Redis, or point REDIS_URL at a running server:
  Debian/Ubuntu:  sudo apt-get install redis-server
  macOS:          brew install redis
  any machine:    REDIS_URL=redis://host:6379 npm run demo`

export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port'))))
    })
  })
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(300, () => done(false))
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (chunk) => done(chunk.toString().startsWith('+PONG')))
    socket.on('error', () => done(false))
  })
}

/** Starts redis-server on a free port and resolves once it answers PING. */
export async function startLocalRedis(): Promise<LocalRedis> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-demo-'))
  const port = await freePort()
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: 'ignore',
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const cleanup = () => {
    child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
  // Even if the caller crashes, the server must not outlive it.
  process.once('exit', cleanup)
  const stop = async () => {
    process.off('exit', cleanup)
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  }
  for (const deadline = Date.now() + 5_000; Date.now() < deadline; ) {
    if (child.exitCode !== null) break
    if (await ping(port)) return { url: `redis://127.0.0.1:${port}`, stop }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  await stop()
  throw new Error(`redis-server on port ${port} did not start within 5 s`)
}
