import type { LuaScript } from '../lua/index.js'
import type { Exec } from '../lua/binding.js'
import { classify, type FailureKind } from '../errors/redis-failure.js'

/** Receives pub/sub messages of one channel. */
export type MessageListener = (message: string) => void

/**
 * The little fencelock needs from a Redis client. One adapter wraps one user client (ioredis,
 * node-redis or Valkey GLIDE, single node or cluster); the user keeps owning that client.
 */
export interface RedisAdapter {
  readonly kind: 'ioredis' | 'node-redis' | 'glide'
  readonly isCluster: boolean
  /** True once the user's client was closed for good: no call can succeed. */
  isClosed(): boolean
  /** The client's last 'error' event (ECONNREFUSED while it reconnects) since it was last ready: why a call gets no reply. */
  clientError(): Error | undefined
  /** EVALSHA, falling back to EVAL on NOSCRIPT (a restarted node has an empty script cache); with `into`, see Exec. */
  readonly evalScript: Exec
  /** `evalScript` followed by a pipelined `WAIT count timeout`: the reply and the replicas that acknowledged. */
  evalThenWait(script: LuaScript, keys: readonly string[], args: readonly (string | number)[], wait: readonly [number, number]): Promise<[unknown, number]>
  /** A plain command (TIME, WAIT, INFO ...); `key` routes it on a cluster. */
  command(args: readonly string[], key?: string): Promise<unknown>
  /** A new connection for pub/sub, created lazily by the shared subscriber. */
  createSubscriber(): Promise<SubscriberConnection>
}

/** How an adapter sends a script call and a plain command; `key` routes it on a cluster. */
export interface ScriptSender {
  evalsha(sha: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>
  eval(source: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>
  command(args: string[], key: string | undefined): Promise<unknown>
}

/**
 * The ScriptSender of a client that takes a command as one list of strings (node-redis, GLIDE):
 * `send(args, key)` sends it, routed by `key` on a cluster (the script's first key).
 */
export function argvSender(send: (args: string[], key?: string) => Promise<unknown>): ScriptSender {
  const call = (command: string, body: string, keys: readonly string[], args: readonly (string | number)[]) => {
    const out = [command, body, String(keys.length), ...keys]
    for (const arg of args) out.push(String(arg))
    return send(out, keys[0])
  }
  return {
    evalsha: (sha, keys, args) => call('EVALSHA', sha, keys, args),
    eval: (source, keys, args) => call('EVAL', source, keys, args),
    command: (args, key) => send(args, key),
  }
}

/**
 * What an adapter file makes of its client: everything but the script path, which
 * `redis/index.ts` adds from `sender` (one script runner per client, script-runner.ts).
 */
export interface ClientParts extends Omit<RedisAdapter, 'evalScript' | 'evalThenWait'> {
  readonly sender: ScriptSender
  /** Reads a client's rewritten error reply back as Redis wrote it (GLIDE), for the runner's checks. */
  readonly asRedisWrote?: (err: unknown) => unknown
}

/** A dedicated pub/sub connection. */
export interface SubscriberConnection {
  subscribe(channel: string): Promise<void>
  unsubscribe(channel: string): Promise<void>
  /** Every message on every subscribed channel. */
  onMessage(listener: (channel: string, message: string) => void): void
  /** Called after the connection came back: messages may have been lost meanwhile. */
  onReconnect(listener: () => void): void
  close(): Promise<void>
}

/** What `lastClientError` listens on: the user's client (an EventEmitter). */
export interface ErrorEmitter {
  on(event: string, listener: (...args: any[]) => void): unknown
  listenerCount?(event: string): number
}

/**
 * The client's last 'error' event until it is 'ready' again. ioredis and node-redis queue a call
 * while they reconnect and fail it only much later, if ever, so its timeout is all fencelock sees;
 * the client knows why (ECONNREFUSED) and says it only in this event. Remembered here, it costs
 * nothing per call. Listening must not change the user's client: where this is its only 'error'
 * listener, `unheard` does what that client does with an error nobody listens to.
 */
export function lastClientError(client: ErrorEmitter, unheard: (err: unknown) => void): () => Error | undefined {
  let last: Error | undefined
  client.on('error', (err: unknown) => {
    if (err instanceof Error) last = err
    if (client.listenerCount?.('error') === 1) unheard(err)
  })
  client.on('ready', () => void (last = undefined))
  return () => last
}

const NOSCRIPT = /^NOSCRIPT/

export function isNoScript(err: unknown): boolean {
  return err instanceof Error && NOSCRIPT.test(err.message)
}

const REPLY_ERRORS = new Set(['ReplyError', 'ErrorReply', 'SimpleError', 'BlobError'])

/**
 * Redis replied with an error that retrying will not cure (a script error, WRONGTYPE, NOPERM).
 * Connection failures, LOADING, BUSY, TRYAGAIN, CLUSTERDOWN, READONLY and MASTERDOWN are transient.
 */
export function isPermanentReplyError(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  // node-redis 5's SimpleError keeps the name 'Error': look at the class too.
  const replyish = REPLY_ERRORS.has(err.name) || REPLY_ERRORS.has(err.constructor.name)
  return replyish && !/^(LOADING|BUSY|TRYAGAIN|CLUSTERDOWN|READONLY|MASTERDOWN|MOVED|ASK|NOREPLICAS)/.test(err.message)
}

/**
 * What the client's `err` is (see RedisFailure): a reply error retrying will not cure, the client
 * closed for good, or anything else, which may pass. A reply error wins over a closed client: Redis
 * itself said no.
 */
export function failureKind(err: unknown, closed: boolean): FailureKind {
  if (isPermanentReplyError(err)) return 'refused'
  return closed ? 'closed' : 'transient'
}

/** Classifies `err` (see `failureKind`) as it leaves the adapter and returns it, for rethrowing. */
export const leaving = (err: unknown, isClosed: () => boolean): unknown => classify(err, failureKind(err, isClosed()))

/** How long a cluster call keeps retrying TRYAGAIN (a slot migrating under it), in ms. */
export const TRYAGAIN_BUDGET = 10_000

/**
 * While a slot migrates, a multi-key command (every script here) whose keys are only partly on the
 * source node gets TRYAGAIN before anything runs: the lock key is there, the queue keys (often
 * absent) count as moved. That lasts until the whole slot has moved, which on a big slot or a
 * loaded machine takes longer than the clients' own retries (ioredis: 16 x 100 ms; node-redis and
 * GLIDE: none). Retry every 100 ms for up to TRYAGAIN_BUDGET ms; every caller bounds its own wait anyway.
 */
const RETRIED_IN_MIGRATION = /TRYAGAIN|- TryAgain: |- Moved: |- Ask: |Too many Cluster redirections/

export async function retryTryAgain<T>(send: () => Promise<T>): Promise<T> {
  const giveUpAt = performance.now() + TRYAGAIN_BUDGET
  for (;;) {
    try {
      return await send()
    } catch (err) {
      // ioredis reports its exhausted retries as "Too many Cluster redirections" (the last of them
      // may be the MOVED that ends the migration): a new call starts with a fresh budget.
      // GLIDE writes it "- TryAgain: …", and hands back a MOVED it met while its slot map was
      // still the old one ("- Moved: …"; the script did not run there): asked again, it routes anew.
      if (!(err instanceof Error) || !RETRIED_IN_MIGRATION.test(err.message) || performance.now() >= giveUpAt) throw err
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}
