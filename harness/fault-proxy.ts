// In-process TCP proxy in front of one Redis node, to inject network faults
// (latency, black holes, lost replies, resets, partitions) that a healthy
// localhost connection never produces.
import net from 'node:net'

export type Direction = 'up' | 'down' | 'both'
export interface DirectionOption {
  /** 'up' = client -> server, 'down' = server -> client; default 'both'. */
  direction?: Direction
}

export interface FaultProxy {
  host: string
  port: number
  /** redis://127.0.0.1:PORT */
  url: string
  /** Delay every chunk by `ms`, preserving order. */
  setDelay(ms: number, opts?: DirectionOption): void
  /** Stop forwarding but keep sockets open; data is held until heal(). */
  hang(opts?: DirectionOption): void
  /** Silently discard data (e.g. 'down' loses a reply that the server did execute). */
  drop(opts?: DirectionOption): void
  /** Back to normal: no delay, no drop, no partition; held data is delivered. */
  heal(): void
  /** Destroy every current connection with a TCP RST. */
  resetAll(): void
  /** Reset existing connections and every new one until heal(). */
  partition(): void
  /**
   * A server being killed: existing connections reset, and until heal() a new one is accepted (its
   * listener is still open while the process's sockets close) and reset once the client has sent
   * its first bytes (its handshake).
   */
  crash(): void
  /** How many connections crash() has reset at their first bytes. */
  crashResets(): number
  connections(): number
  close(): Promise<void>
}

interface Fault {
  delayMs: number
  hanging: boolean
  dropping: boolean
}

const HOST = '127.0.0.1'
const normal = (): Fault => ({ delayMs: 0, hanging: false, dropping: false })

/** One direction of one connection: a FIFO of chunks, each released at arrival time + delay. */
class Pipe {
  private queue: { chunk: Buffer; releaseAt: number }[] = []
  private timer: NodeJS.Timeout | undefined
  private ended = false

  constructor(
    private readonly to: net.Socket,
    private readonly fault: () => Fault,
  ) {}

  push(chunk: Buffer): void {
    const fault = this.fault()
    if (fault.dropping) return
    this.queue.push({ chunk, releaseAt: Date.now() + fault.delayMs })
    this.pump()
  }

  end(): void {
    this.ended = true
    this.pump()
  }

  pump(): void {
    const fault = this.fault()
    if (this.timer || fault.hanging || this.to.destroyed) return
    for (let head = this.queue[0]; head; head = this.queue[0]) {
      const wait = head.releaseAt - Date.now()
      if (wait > 0) {
        this.timer = setTimeout(() => {
          this.timer = undefined
          this.pump()
        }, wait)
        return
      }
      this.queue.shift()
      this.to.write(head.chunk)
    }
    // Forward the half-close only after held data, and not into a black hole.
    if (this.ended && !fault.dropping && !this.to.writableEnded) this.to.end()
  }

  dispose(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    this.queue = []
  }
}

interface Connection {
  client: net.Socket
  server: net.Socket
  pipes: Pipe[]
}

function reset(socket: net.Socket): void {
  // resetAndDestroy sends RST (Node >= 18.3); it throws if the socket is not connected yet.
  try {
    if (typeof socket.resetAndDestroy === 'function' && !socket.connecting && !socket.destroyed) {
      socket.resetAndDestroy()
      return
    }
  } catch {
    /* fall through */
  }
  socket.destroy()
}

export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const faults = { up: normal(), down: normal() }
  let partitioned = false
  let crashed = false
  let crashResets = 0
  const conns = new Set<Connection>()

  const each = (opts: DirectionOption | undefined, fn: (f: Fault) => void) => {
    const direction = opts?.direction ?? 'both'
    if (direction !== 'down') fn(faults.up)
    if (direction !== 'up') fn(faults.down)
  }
  const pumpAll = () => conns.forEach((c) => c.pipes.forEach((p) => p.pump()))
  const kill = (conn: Connection) => {
    conns.delete(conn)
    conn.pipes.forEach((p) => p.dispose())
    reset(conn.client)
    reset(conn.server)
  }

  // allowHalfOpen: a client's FIN must not cut off the reply that is still on its way.
  const listener = net.createServer({ allowHalfOpen: true }, (client) => {
    if (partitioned) return reset(client)
    if (crashed) {
      client.on('error', () => {})
      client.once('end', () => client.destroy()) // a client that leaves first: nothing half-open keeps close() waiting
      client.once('data', () => {
        crashResets++
        reset(client)
      })
      return
    }
    const server = net.connect({ host: target.host, port: target.port, allowHalfOpen: true })
    const up = new Pipe(server, () => faults.up)
    const down = new Pipe(client, () => faults.down)
    const conn: Connection = { client, server, pipes: [up, down] }
    conns.add(conn)

    client.on('data', (chunk) => up.push(chunk))
    server.on('data', (chunk) => down.push(chunk))
    client.on('end', () => up.end())
    server.on('end', () => down.end())
    // Either side failing (or the target refusing) takes the whole connection down.
    for (const socket of [client, server]) {
      socket.on('error', () => kill(conn))
      socket.on('close', () => {
        if (client.destroyed && server.destroyed) conns.delete(conn)
        else if (socket.destroyed && !socket.readableEnded) kill(conn)
      })
    }
  })

  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject)
    listener.listen(0, HOST, () => resolve())
  })
  const address = listener.address()
  if (!address || typeof address === 'string') throw new Error('fault proxy: no listening port')
  const port = address.port

  return {
    host: HOST,
    port,
    url: `redis://${HOST}:${port}`,
    setDelay(ms, opts) {
      each(opts, (f) => (f.delayMs = ms))
    },
    hang(opts) {
      each(opts, (f) => (f.hanging = true))
    },
    drop(opts) {
      each(opts, (f) => (f.dropping = true))
    },
    heal() {
      faults.up = normal()
      faults.down = normal()
      partitioned = false
      crashed = false
      pumpAll()
    },
    resetAll() {
      ;[...conns].forEach(kill)
    },
    partition() {
      partitioned = true
      ;[...conns].forEach(kill)
    },
    crash() {
      crashed = true
      ;[...conns].forEach(kill)
    },
    crashResets() {
      return crashResets
    },
    connections() {
      return conns.size
    },
    async close() {
      ;[...conns].forEach(kill)
      await new Promise<void>((resolve) => listener.close(() => resolve()))
    },
  }
}
