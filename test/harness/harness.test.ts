// Tests for the test harness itself: if these lie, every other suite lies too.
import { spawnSync } from 'node:child_process'
import net from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { describeRedis, useFaultProxy } from '../../harness/per-adapter.js'
import { pingRaw, requireRedisOrSkip, startCluster, startRedis, type RedisCluster, type RedisProcess } from '../../harness/redis-server.js'
import { until } from '../../harness/until.js'

/** Minimal inline-protocol client, so proxy tests see exactly what crosses the wire. */
async function rawClient(port: number) {
  const socket = net.connect({ host: '127.0.0.1', port })
  socket.on('error', () => undefined) // resets are expected in these tests
  let buffer = ''
  socket.on('data', (chunk) => (buffer += chunk.toString()))
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('close', () => reject(new Error('closed before connect')))
  })
  return {
    socket,
    closed,
    send: (command: string) => socket.write(`${command}\r\n`),
    /** What has arrived and not been read as a reply yet. */
    pending: () => buffer,
    /** Next reply line, or undefined if none arrives in time. */
    reply(timeoutMs = 2_000): Promise<string | undefined> {
      const line = () => {
        const end = buffer.indexOf('\r\n')
        if (end < 0) return undefined
        const first = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        return first
      }
      return until('a reply line arrives', line, { timeout: timeoutMs, every: 5 }).catch(() => undefined)
    },
  }
}

describe.skipIf(!requireRedisOrSkip())('redis-server harness', () => {
  it('starts, answers PING and stops', async () => {
    const redis = await startRedis()
    expect(redis.url).toBe(`redis://127.0.0.1:${redis.port}`)
    expect(redis.pid).toBeGreaterThan(0)
    expect(await redis.cli('PING')).toBe('PONG')
    await redis.stop()
    expect(await pingRaw(redis.port)).toBe(false)
    await redis.stop() // idempotent
  })

  it('restarts empty on the same port with a new pid, after kill9 and after stop', async () => {
    const redis = await startRedis({ args: ['--maxmemory-policy', 'noeviction'] })
    await redis.cli('SET', 'k', 'v')
    expect(await redis.cli('GET', 'k')).toBe('v')

    const firstPid = redis.pid
    await redis.kill9()
    expect(await pingRaw(redis.port)).toBe(false)
    await redis.restart()
    expect(redis.pid).not.toBe(firstPid)
    expect(await redis.cli('GET', 'k')).toBe('')
    expect(await redis.cli('CONFIG', 'GET', 'maxmemory-policy')).toContain('noeviction')

    await redis.cli('SET', 'k', 'v')
    await redis.stop()
    await redis.restart()
    expect(await redis.cli('EXISTS', 'k')).toBe('0')
    await redis.stop()
  })

  it('restart() tries again when its port is held by another socket when it first starts', async () => {
    const redis = await startRedis()
    await redis.kill9()
    // Another socket on the port: the first server restart() starts cannot bind it and exits.
    const blocker = net.createServer((socket) => socket.destroy())
    await new Promise<void>((resolve) => blocker.listen(redis.port, '127.0.0.1', resolve))
    // Freed once that first server has come and gone (its probe reached the blocker, and no
    // redis-server on the port is left), so only a second try can succeed.
    const serversOnPort = () =>
      spawnSync('pgrep', ['-f', `redis-server.*[: ]${redis.port}( |$)`])
        .stdout.toString()
        .trim()
    let probed = false
    blocker.on('connection', () => void (probed = true))
    const freed = until('the first try to exit', () => probed && serversOnPort() === '', { every: 5, timeout: 10_000 }).then(
      () => new Promise<void>((resolve) => blocker.close(() => resolve())),
    )
    await redis.restart()
    await freed
    expect(await redis.cli('PING')).toBe('PONG')
    await redis.stop()
  })

  it('pause() silences the server until resume(); stop() works on a paused server', async () => {
    const redis = await startRedis()
    redis.pause()
    expect(await pingRaw(redis.port, '127.0.0.1', 300)).toBe(false)
    redis.resume()
    expect(await pingRaw(redis.port, '127.0.0.1', 1_000)).toBe(true)

    redis.pause()
    await redis.stop()
    expect(await pingRaw(redis.port)).toBe(false)
  })

  it('rejects cli() on a Redis error reply', async () => {
    const redis = await startRedis()
    await expect(redis.cli('NOSUCHCOMMAND')).rejects.toThrow(/unknown command/)
    await redis.stop()
  })
})

describe.skipIf(!requireRedisOrSkip())('redis cluster harness', () => {
  let cluster: RedisCluster
  beforeAll(async () => {
    cluster = await startCluster({ masters: 3 })
  }, 30_000)
  afterAll(() => cluster?.stop())

  /** `key` set to `value` on the master of its slot; that slot, its master, and another master to move it to. */
  async function slotToMove(key: string, value: string): Promise<{ slot: number; from: RedisProcess; to: RedisProcess }> {
    const slot = await cluster.slotOf(key)
    const from = await cluster.nodeForSlot(slot)
    const to = (await cluster.masters()).find((m) => m !== from)
    if (!to) throw new Error('no other master')
    await from.cli('SET', key, value)
    return { slot, from, to }
  }

  it('comes up with cluster_state:ok on every node', async () => {
    expect(cluster.nodes).toHaveLength(3)
    for (const node of cluster.nodes) expect(await node.cli('CLUSTER', 'INFO')).toContain('cluster_state:ok')
    expect(await cluster.masters()).toHaveLength(3)
  })

  it('migrates a slot in two steps, with ASK in between', async () => {
    const { slot, from, to } = await slotToMove('{mig}present', 'v')

    await cluster.beginMigration(slot, to)
    // A key missing on the source is redirected to the importing node.
    await expect(from.cli('GET', '{mig}absent')).rejects.toThrow(new RegExp(`ASK ${slot} 127.0.0.1:${to.port}`))
    expect(await from.cli('GET', '{mig}present')).toBe('v')

    await cluster.finishMigration(slot)
    expect(await cluster.nodeForSlot(slot)).toBe(to)
    expect(await to.cli('GET', '{mig}present')).toBe('v')
    await expect(from.cli('GET', '{mig}present')).rejects.toThrow(/MOVED/)
  })

  it('migrateSlot moves a key in one call', async () => {
    const { slot, to } = await slotToMove('{one}key', '42')
    await cluster.migrateSlot(slot, to)
    expect(await to.cli('GET', '{one}key')).toBe('42')
    expect(await cluster.nodeForSlot(slot)).toBe(to)
  })
})

describeRedis('fault proxy', (server) => {
  const proxy = useFaultProxy(server)
  afterEach(() => {
    proxy.heal()
    proxy.resetAll()
  })

  it('forwards traffic and counts connections', async () => {
    const client = await rawClient(proxy.port)
    client.send('PING')
    expect(await client.reply()).toBe('+PONG')
    expect(proxy.connections()).toBe(1)
    client.socket.end()
    await client.closed
    await until('the proxy dropped the connection', () => proxy.connections() === 0)
  })

  it('setDelay adds latency in each direction', async () => {
    const client = await rawClient(proxy.port)
    proxy.setDelay(150)
    let started = Date.now()
    client.send('PING')
    expect(await client.reply()).toBe('+PONG')
    // The tool's promise: 150 ms up and 150 ms down, so at least 300 (a lower bound; 10 ms for timer rounding).
    expect(Date.now() - started).toBeGreaterThanOrEqual(290)

    proxy.setDelay(0)
    proxy.setDelay(300, { direction: 'down' })
    const direct = await rawClient(server.redis.port)
    started = Date.now()
    client.send('INCR delay-down')
    // The way up is not delayed: the server runs the command long before the 300 ms that a delay
    // up would take (a bound 50x what it takes here), while its reply is held on the way down.
    await until(
      'the server ran the command',
      async () => {
        direct.send('GET delay-down')
        return (await direct.reply()) === '$1' && (await direct.reply()) === '1'
      },
      { timeout: 150, every: 1 },
    )
    expect(client.pending()).toBe('')
    expect(await client.reply()).toBe(':1')
    // The tool's promise: the reply came 300 ms late (a lower bound; 5 ms for timer rounding).
    expect(Date.now() - started).toBeGreaterThanOrEqual(295)
    direct.socket.destroy()
  })

  it('hang holds data without losing it until heal', async () => {
    const client = await rawClient(proxy.port)
    proxy.hang()
    client.send('SET hang-key 1')
    expect(await client.reply(300)).toBeUndefined()
    expect(await server.redis.cli('EXISTS', 'hang-key')).toBe('0') // the request itself is held
    proxy.heal()
    expect(await client.reply()).toBe('+OK')

    proxy.hang({ direction: 'down' })
    client.send('SET hang-key 2')
    expect(await client.reply(300)).toBeUndefined()
    expect(await server.redis.cli('GET', 'hang-key')).toBe('2') // executed, reply held
    proxy.heal()
    expect(await client.reply()).toBe('+OK')
  })

  it('drop down loses a reply that the server did execute', async () => {
    const client = await rawClient(proxy.port)
    proxy.drop({ direction: 'down' })
    client.send('INCR drop-counter')
    expect(await client.reply(300)).toBeUndefined()
    expect(await server.redis.cli('GET', 'drop-counter')).toBe('1')
    proxy.heal()
    client.send('PING')
    expect(await client.reply()).toBe('+PONG') // the lost reply never shows up
  })

  it('resetAll closes client sockets', async () => {
    const a = await rawClient(proxy.port)
    const b = await rawClient(proxy.port)
    await until('the proxy counts both connections', () => proxy.connections() === 2)
    proxy.resetAll()
    await Promise.all([a.closed, b.closed])
    expect(proxy.connections()).toBe(0)
  })

  it('partition cuts existing and refuses new connections until heal', async () => {
    const existing = await rawClient(proxy.port)
    proxy.partition()
    await existing.closed

    const refused = net.connect({ host: '127.0.0.1', port: proxy.port })
    refused.on('error', () => undefined)
    let received = ''
    refused.on('data', (chunk) => (received += chunk.toString()))
    refused.on('connect', () => refused.write('PING\r\n'))
    await new Promise((resolve) => refused.once('close', resolve))
    expect(received).toBe('')
    expect(proxy.connections()).toBe(0)

    proxy.heal()
    const after = await rawClient(proxy.port)
    after.send('PING')
    expect(await after.reply()).toBe('+PONG')
  })

  it('crash accepts a new connection and resets it at its first bytes, like a server being killed, until heal', async () => {
    const existing = await rawClient(proxy.port)
    proxy.crash()
    await existing.closed

    const dying = await rawClient(proxy.port) // connected: the listener still accepts
    const reset = new Promise<string | undefined>((resolve) => dying.socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code)))
    dying.send('PING')
    await dying.closed
    expect(await reset).toBe('ECONNRESET')
    expect(dying.pending()).toBe('')
    expect(proxy.crashResets()).toBe(1)

    proxy.heal()
    const after = await rawClient(proxy.port)
    after.send('PING')
    expect(await after.reply()).toBe('+PONG')
  })
})
