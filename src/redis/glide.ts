import { argvSender, leaving, retryTryAgain, type ClientParts, type SubscriberConnection } from './adapter.js'

/** The parts of Valkey GLIDE's `GlideClient` and `GlideClusterClient` (2.x) that fencelock uses. */
export interface GlideClientLike {
  customCommand(args: string[], options?: object): Promise<unknown>
  invokeScript(...args: any[]): Promise<unknown>
  close(errorMessage?: string): void
  subscribe?(channels: Iterable<string>, timeoutMs: number): Promise<void>
  unsubscribe?(channels: Iterable<string>, timeoutMs: number): Promise<void>
  getStatistics?(): object
}

/** What a GLIDE client keeps of itself at run time (not in its public types): its options, whether it closed. */
interface GlideInternals {
  readonly config?: object
  readonly isClosed?: boolean
  readonly constructor: { readonly name: string; createClient?(options: object): Promise<GlideClientLike> }
}

interface PubSubMessage {
  readonly channel: unknown
  readonly message: unknown
}

/** A GLIDE client: `customCommand` and `invokeScript` (no other client has both), made by a `createClient` factory. */
export function isGlide(client: unknown): client is GlideClientLike {
  const c = client as Partial<GlideClientLike & GlideInternals> | null
  return (
    typeof c === 'object' &&
    c !== null &&
    typeof c.customCommand === 'function' &&
    typeof c.invokeScript === 'function' &&
    typeof c.constructor?.createClient === 'function'
  )
}

/** A cluster client routes by slot: it alone has `fcallWithRoute`. */
const isGlideCluster = (client: GlideClientLike): boolean => typeof (client as { fcallWithRoute?: unknown }).fcallWithRoute === 'function'

/** How long a SUBSCRIBE of the wake-up connection may wait for its acknowledgement (GLIDE's own wait). */
const SUBSCRIBE_WAIT_MS = 10_000

/** How often the wake-up client's statistics are read for a resubscription after a reconnect (a local call, no command). */
const RESYNC_POLL_MS = 200

/** GLIDE's names for the kinds of server error, as the codes Redis sends (NOSCRIPT, NOPERM, ...). */
const CODES: Record<string, string> = {
  ResponseError: 'ERR',
  PermissionDenied: 'NOPERM',
  NoScriptError: 'NOSCRIPT',
  ExecAbortError: 'EXECABORT',
  BusyLoadingError: 'LOADING',
  TryAgain: 'TRYAGAIN',
  Moved: 'MOVED',
  Ask: 'ASK',
  CrossSlot: 'CROSSSLOT',
  ClusterDown: 'CLUSTERDOWN',
  ReadOnly: 'READONLY',
  MasterDown: 'MASTERDOWN',
  AuthenticationFailed: 'WRONGPASS',
  NoAuth: 'NOAUTH',
}

/** A server's error reply as GLIDE reported it, with Redis' own code in front, as the other clients show it. */
export class GlideReplyError extends Error {
  override readonly name = 'ReplyError'
}

/**
 * GLIDE rejects a server's error reply with a `RequestError` whose message GLIDE rewrote
 * (`An error was signalled by the server: - NoScriptError: …`, `WRONGTYPE: …`); its subclasses
 * (TimeoutError, ConnectionError) and ClosingError are no reply at all. A reply error leaves the
 * adapter as Redis wrote it (`NOSCRIPT …`), so that NOSCRIPT, permanent refusals and transient
 * codes are read as for every other client; the original is its `cause`.
 */
export function glideReplyError(err: unknown): unknown {
  if (!(err instanceof Error) || err.constructor.name !== 'RequestError') return err
  const signalled = /^An error was signalled by the server: - (\w+): ([\s\S]*)$/.exec(err.message)
  if (signalled) return new GlideReplyError(`${CODES[signalled[1]!] ?? signalled[1]} ${signalled[2]}`, { cause: err })
  const coded = /^([A-Z][A-Z_]+): ([\s\S]*)$/.exec(err.message)
  if (coded) return new GlideReplyError(`${coded[1]} ${coded[2]}`, { cause: err })
  return new GlideReplyError(err.message, { cause: err })
}

const rejectAsReply = (err: unknown): never => {
  throw glideReplyError(err)
}

export function glideParts(client: GlideClientLike): ClientParts {
  const cluster = isGlideCluster(client)
  const internals = client as unknown as GlideInternals
  const isClosed = () => internals.isClosed === true
  // On a cluster, a command with a key goes to the primary of the key's slot (a script's WAIT, too:
  // GLIDE keeps one connection per node, so it follows the script there in order). GLIDE hands a
  // TRYAGAIN (a slot migrating under a script) back at once: retried as for every client (see
  // retryTryAgain), and so is a MOVED or ASK it gave up following while the nodes' views of a
  // migrating slot disagree (the source answers ASK, the target sends the call on with MOVED to a
  // node that sends it back): nothing ran, the call is asked again as it was.
  const send = cluster
    ? (args: string[], key?: string) =>
        retryTryAgain(() => client.customCommand(args, key === undefined ? undefined : { route: { type: 'primarySlotKey', key } }))
    : (args: string[]) => client.customCommand(args)
  return {
    kind: 'glide',
    isCluster: cluster,
    isClosed,
    // GLIDE has no error events: a call that gets no reply is rejected by GLIDE itself
    // (ConnectionError, TimeoutError after its requestTimeout), and that rejection is the cause.
    clientError: () => undefined,
    sender: argvSender(send),
    // GLIDE's rewritten error replies are read back as Redis wrote them in the runner's own
    // rejection handlers: no extra handler (and promise) per call.
    asRedisWrote: glideReplyError,
    command: (args, key) => send([...args], key).catch((err: unknown) => Promise.reject(leaving(glideReplyError(err), isClosed))),
    createSubscriber: () => glideSubscriber(internals),
  }
}

/**
 * GLIDE has no `duplicate()`: the wake-up connection is a second client made by the same factory
 * from the options the user's client was created with (GLIDE keeps them), with fencelock's
 * message callback. GLIDE subscribes again after a reconnect by itself (it keeps the wanted
 * subscriptions) and emits no event for it; its statistics do record when the subscriptions were
 * last brought in line with the server (`subscription_last_sync_timestamp`). That is read every
 * RESYNC_POLL_MS (in the process, no command is sent): a change that none of fencelock's own
 * SUBSCRIBE or UNSUBSCRIBE calls made is a resubscription after a reconnect, and messages may have
 * been lost meanwhile, so the reconnect listeners run (the waiters look again).
 */
async function glideSubscriber(client: GlideInternals): Promise<SubscriberConnection> {
  const factory = client.constructor.createClient
  if (!client.config || !factory) throw new Error('this GLIDE client keeps no options to make a pub/sub client from (GLIDE 2.x does)')
  const listeners: ((channel: string, message: string) => void)[] = []
  const reconnectListeners: (() => void)[] = []
  const callback = (msg: PubSubMessage) => {
    const channel = String(msg.channel)
    const message = String(msg.message)
    for (const listener of listeners) listener(channel, message)
  }
  const sub = await factory.call(client.constructor, { ...client.config, pubsubSubscriptions: { channelsAndPatterns: {}, callback } })
  if (typeof sub.subscribe !== 'function' || typeof sub.unsubscribe !== 'function') {
    sub.close()
    throw new Error('this GLIDE client cannot subscribe after it was created (GLIDE 2.x can)')
  }
  const lastSync = () => String((sub.getStatistics?.() as { subscription_last_sync_timestamp?: unknown } | undefined)?.subscription_last_sync_timestamp)
  let seen = lastSync()
  let own = 0 // fencelock's SUBSCRIBE and UNSUBSCRIBE calls in flight: their syncs are no reconnect
  const watch = setInterval(() => {
    if (own > 0) return
    const now = lastSync()
    if (now === seen) return
    seen = now
    for (const listener of reconnectListeners) listener()
  }, RESYNC_POLL_MS)
  watch.unref()
  const ownCall = (sent: Promise<void>) => {
    own++
    return sent.then(
      () => {
        own--
        seen = lastSync()
      },
      (err: unknown) => {
        own--
        seen = lastSync()
        return rejectAsReply(err)
      },
    )
  }
  return {
    subscribe: (channel) => ownCall(sub.subscribe!(new Set([channel]), SUBSCRIBE_WAIT_MS)),
    unsubscribe: (channel) => ownCall(sub.unsubscribe!(new Set([channel]), SUBSCRIBE_WAIT_MS)),
    onMessage: (listener) => void listeners.push(listener),
    onReconnect: (listener) => void reconnectListeners.push(listener),
    close: async () => {
      clearInterval(watch)
      sub.close()
    },
  }
}
