// Replaces redis-semaphore's test/shell.ts (docker compose stop/up of its servers): stops and
// starts the redis-server processes that run.mjs started, on the ports it passes in REDIS_URI<n>.
import { execFile, spawn } from 'node:child_process'
import { Socket } from 'node:net'
import { delay } from './delay'

const portOf = (num: number): number => Number(new URL(process.env[`REDIS_URI${num}`] ?? `redis://127.0.0.1:${6000 + num}`).port)

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket()
    socket.once('error', () => resolve(false))
    socket.connect(port, '127.0.0.1', () => {
      socket.write('PING\r\n')
      socket.once('data', (d) => {
        socket.destroy()
        resolve(d.toString().startsWith('+PONG'))
      })
    })
  })
}

export async function upRedisServer(num: number): Promise<void> {
  const port = portOf(num)
  if (await answers(port)) return
  const child = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--daemonize', 'yes'], { stdio: 'ignore' })
  await new Promise((resolve) => child.once('exit', resolve))
  while (!(await answers(port))) await delay(20)
}

export async function downRedisServer(num: number): Promise<void> {
  const port = portOf(num)
  await new Promise((resolve) => execFile('redis-cli', ['-p', String(port), 'shutdown', 'nosave'], () => resolve(undefined)))
  while (await answers(port)) await delay(20)
}
