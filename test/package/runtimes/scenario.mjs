// One run of fencelock's public API on whatever runtime executes this file (Node, Bun or Deno),
// with one client library: `<runtime> scenario.mjs <ioredis|node-redis|glide> <redis://host:port> <prefix>`.
// test/package/runtimes.test.ts copies it (and await-using.mjs) next to a private build of the package,
// so `fencelock` resolves to the built package as users get it, and the client libraries to the
// repository's own.
//
// Protocol (read by the test): one stdout line per step, `ok <step> <json>`; a failed step prints
// `FAIL <step>: <stack>` on stderr, sets exit code 1, and the next step runs all the same (each
// step uses its own resources), so one missing feature shows as exactly one failed step. The last
// line is `closed`, printed after every locks instance and client is closed: from then on nothing
// may keep the process alive, so it must exit by itself (this script never calls process.exit).
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { createRequire } from 'node:module'
import { claimFence, createLocks, fencedSet, FencelockError, LockLostError, LockReentryError, LockTimeoutError } from 'fencelock'

const [clientName, url, prefix] = process.argv.slice(2)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** The runtime as it names itself, so the test can check it ran where it meant to. */
const runtime = globalThis.Deno ? `deno ${globalThis.Deno.version.deno}` : globalThis.Bun ? `bun ${globalThis.Bun.version}` : `node ${process.versions.node}`

/** A connected client of the library under test, with the few raw commands the checks need. */
async function connect() {
  if (clientName === 'ioredis') {
    const { Redis } = await import('ioredis')
    // lazyConnect, as harness/clients.ts: fencelock's pub/sub duplicate inherits it.
    const client = new Redis(url, { lazyConnect: true })
    client.on('error', () => {})
    await client.connect()
    return { raw: client, command: (...args) => client.call(...args.map(String)), quit: () => client.quit() }
  }
  if (clientName === 'node-redis') {
    const { createClient } = await import('redis')
    const client = createClient({ url })
    client.on('error', () => {})
    await client.connect()
    return { raw: client, command: (...args) => client.sendCommand(args.map(String)), quit: () => client.close() }
  }
  if (clientName === 'glide') {
    const { GlideClient, Logger } = await import('@valkey/valkey-glide')
    Logger.setLoggerConfig('off')
    const { hostname, port } = new URL(url)
    const client = await GlideClient.createClient({ addresses: [{ host: hostname, port: Number(port) }], requestTimeout: 5_000 })
    return { raw: client, command: (...args) => client.customCommand(args.map(String)), quit: async () => client.close() }
  }
  throw new Error(`unknown client ${JSON.stringify(clientName)} (expected ioredis, node-redis or glide)`)
}

function check(ok, what) {
  if (!ok) throw new Error(`check failed: ${what}`)
}

/** Scripts Redis has run so far (every fencelock attempt, release, inspect and guard is one). */
async function scriptCalls(client) {
  const info = String(await client.command('INFO', 'commandstats'))
  let calls = 0
  for (const match of info.matchAll(/^cmdstat_(?:eval|evalsha|eval_ro|evalsha_ro|fcall|fcall_ro):calls=(\d+)/gm)) calls += Number(match[1])
  return calls
}

/** Looks at `condition` every `every` ms until it holds; throws naming `what` after `ms`. */
async function until(what, condition, ms = 5_000, every = 10) {
  const started = performance.now()
  while (!(await condition())) {
    if (performance.now() - started > ms) throw new Error(`timed out after ${ms} ms waiting until ${what}`)
    await sleep(every)
  }
}

/** What `call` throws or rejects with; a check failure if it succeeds. */
async function rejection(call, what) {
  try {
    await call()
  } catch (err) {
    return err
  }
  throw new Error(`check failed: ${what} resolved instead of rejecting`)
}

const clients = []
const instances = []
let failed = false

async function step(name, body) {
  try {
    console.log(`ok ${name} ${JSON.stringify((await body()) ?? {})}`)
  } catch (err) {
    failed = true
    process.exitCode = 1
    console.error(`FAIL ${name}: ${err?.stack ?? err}`)
  }
}

const steps = {
  /** acquire: a held lease with a fence and a live signal; others are kept out, with typed errors. */
  async acquire({ holder, waiter }) {
    const resource = 'acquire'
    const lease = await holder.acquire(resource, { ttl: 10_000 })
    check(lease.held && Number.isSafeInteger(lease.fence) && lease.fence > 0, `a held lease with a positive fence (held ${lease.held}, fence ${lease.fence})`)
    check(lease.signal instanceof AbortSignal && !lease.signal.aborted, 'the lease has a live AbortSignal')
    check((await waiter.tryAcquire(resource)) === null, 'tryAcquire of a held lock gives null')
    const err = await rejection(() => waiter.acquire(resource, { wait: 100 }), 'acquire of a held lock with wait 100')
    check(
      err instanceof LockTimeoutError && err instanceof FencelockError && err.code === 'LOCK_TIMEOUT',
      `a LockTimeoutError with code LOCK_TIMEOUT (got ${err?.name} ${err?.code}: ${err?.message})`,
    )
    check((await lease.release()) === true, 'release gives true')
    check(!lease.held, 'a released lease is no longer held')
    return { fence: lease.fence }
  },

  /** A second waiter is woken by the release's message: no scripts while it waits, and telemetry names the release as what woke it. */
  async wake({ holder, waiter, holderClient }) {
    const resource = 'wake'
    const seen = []
    const listener = (message) => {
      if (message.resource === resource) seen.push(message)
    }
    subscribe('fencelock:acquire', listener)
    try {
      const first = await holder.acquire(resource, { ttl: 10_000 })
      const scriptsBefore = await scriptCalls(holderClient)
      const waiting = waiter.acquire(resource, { ttl: 10_000, wait: 8_000 })
      waiting.catch(() => {}) // awaited below; a failure must not be an unhandled rejection meanwhile
      // A fresh waiter sends its first attempt, subscribes, and looks once more when the
      // subscription is active (a release in between would have gone unheard): both attempts are
      // done before the release, or the second one could take the lock instead of the message.
      await until('the waiter made its two attempts', async () => (await scriptCalls(holderClient)) - scriptsBefore >= 2)
      await until('the second instance waits in the queue', async () => (await holder.inspect(resource)).waiters === 1)
      await until(
        'the waiter subscribed to its wake-up channel',
        async () => ((await holderClient.command('PUBSUB', 'CHANNELS', `${prefix}{${resource}}*`)) ?? []).length > 0,
      )
      const before = await scriptCalls(holderClient)
      await sleep(500) // time must pass: the waiter sends nothing meanwhile, which no event can say
      const polled = (await scriptCalls(holderClient)) - before
      check(polled === 0, `the waiter sends nothing while it waits (${polled} scripts ran in 500 ms)`)
      const releasedAt = performance.now()
      check((await first.release()) === true, 'the holder releases')
      const second = await waiting
      const latency = Math.round(performance.now() - releasedAt)
      // Its re-check would come only after the holder's remaining ttl (~9 s): the release's message woke it.
      const wakes = seen.find((m) => m.token === second.token)?.wakes ?? []
      check(
        wakes.includes('release') && !wakes.includes('recheck'),
        `the release's message woke the waiter, not its re-check (wakes ${JSON.stringify(wakes)}; acquired ${latency} ms after the release)`,
      )
      check(second.fence > first.fence, `the next holder's fence ${second.fence} is larger than ${first.fence}`)
      check((await second.release()) === true, 'the woken waiter releases')
      return { latency, polled, wakes }
    } finally {
      unsubscribe('fencelock:acquire', listener)
    }
  },

  /** Fences strictly increase from one acquisition to the next, whichever instance acquires. */
  async fences({ holder, waiter }) {
    const fences = []
    for (let i = 0; i < 6; i++) {
      const lease = await (i % 2 ? waiter : holder).acquire('fences', { ttl: 5_000 })
      fences.push(lease.fence)
      await lease.release()
    }
    check(
      fences.every((fence, i) => i === 0 || fence > fences[i - 1]),
      `fences strictly increase: ${fences.join(', ')}`,
    )
    return { fences }
  },

  /** fencedSet and claimFence refuse a stale fence. */
  async guards({ holder, waiter, holderClient }) {
    const old = await holder.acquire('guards', { ttl: 5_000 })
    await old.release()
    const current = await waiter.acquire('guards', { ttl: 5_000 })
    const [stale, fresh] = [old.fence, current.fence]
    const key = `${prefix}balance`
    check((await fencedSet(holderClient.raw, key, 'fresh', fresh)) === true, `fencedSet with fence ${fresh} writes`)
    check((await fencedSet(holderClient.raw, key, 'stale', stale)) === false, `fencedSet with the stale fence ${stale} is refused`)
    const value = await holderClient.command('GET', key)
    check(value === 'fresh', `the stale write left the value alone (GET gave ${JSON.stringify(value)})`)
    const ledger = `${prefix}ledger`
    check((await claimFence(holderClient.raw, ledger, fresh)) === true, `claimFence with fence ${fresh} succeeds`)
    check((await claimFence(holderClient.raw, ledger, stale)) === false, `claimFence with the stale fence ${stale} is refused`)
    check((await fencedSet(holderClient.raw, ledger, 'late', stale)) === false, 'fencedSet below a claimed fence is refused')
    await current.release()
    return { stale, fresh }
  },

  /** withLock holds the lock while fn runs, returns fn's value, and releases. */
  async withLock({ holder, waiter }) {
    const result = await holder.withLock(
      'with-lock',
      async (lease) => {
        const info = await waiter.inspect('with-lock')
        check(info.held && info.token === lease.token && info.fence === lease.fence, `inspect inside withLock shows its lease (${JSON.stringify(info)})`)
        return 42
      },
      { ttl: 5_000 },
    )
    check(result === 42, `withLock returns fn's value (got ${result})`)
    const after = await holder.inspect('with-lock')
    check(!after.held, `withLock released the lock (${JSON.stringify(after)})`)
    return { result }
  },

  /** withLocks takes several resources all or nothing, with a fence for each. */
  async withLocks({ holder, waiter }) {
    const fences = await holder.withLocks(
      ['transfer:b', 'transfer:a'],
      async (lease) => {
        check(lease.resources.join() === 'transfer:a,transfer:b', `the resources, sorted (got ${lease.resources.join()})`)
        check((await waiter.tryAcquire('transfer:a')) === null, 'a resource of a held withLocks is not free for others')
        return lease.fences
      },
      { ttl: 5_000 },
    )
    check(fences['transfer:a'] > 0 && fences['transfer:b'] > 0, `a fence per resource (${JSON.stringify(fences)})`)
    const after = await waiter.tryAcquire('transfer:a', { ttl: 5_000 })
    check(after !== null, 'withLocks released everything')
    await after.release()
    return { fences }
  },

  /** A read/write lock: readers share, a writer is alone. */
  async readWrite({ holder, waiter }) {
    const config = holder.readWrite('config')
    const other = waiter.readWrite('config')
    const [first, second] = await Promise.all([config.read({ ttl: 5_000 }), other.read({ ttl: 5_000 })])
    check(first.held && second.held, 'two readers hold the lock at once')
    check((await other.tryWrite()) === null, 'no writer while readers hold it')
    await Promise.all([first.release(), second.release()])
    const writer = await other.write({ ttl: 5_000 })
    check((await config.tryRead()) === null, 'no reader while the writer holds it')
    await writer.release()
    return { fence: writer.fence }
  },

  /** A semaphore of 3 permits: never a 4th at once; a release wakes the next caller. */
  async semaphore({ holder, waiter }) {
    const limit = 3
    const pool = holder.semaphore('renderers', { limit })
    const permits = await Promise.all(Array.from({ length: limit }, () => pool.acquire({ ttl: 10_000 })))
    check(new Set(permits.map((p) => p.token)).size === limit, `${limit} distinct permits`)
    check((await pool.tryAcquire()) === null, `a permit beyond the limit of ${limit} is refused`)
    const queued = waiter.semaphore('renderers', { limit }).acquire({ ttl: 5_000, wait: 5_000 })
    queued.catch(() => {})
    await until('a fourth caller waits for a permit', async () => (await pool.inspect()).waiters === 1)
    const held = (await pool.inspect()).held
    check(held === limit, `inspect counts ${limit} permits held (got ${held})`)
    const freedAt = performance.now()
    await permits[0].release()
    const fourth = await queued
    const latency = Math.round(performance.now() - freedAt)
    check(latency < 1_500, `a released permit woke the waiting caller (${latency} ms)`)
    check(fourth.fence > Math.max(...permits.map((p) => p.fence)), 'the fourth permit has the largest fence')
    for (const permit of [...permits.slice(1), fourth]) check((await permit.release()) === true, 'each permit releases')
    const left = (await pool.inspect()).held
    check(left === 0, `no permit left after releasing all (got ${left})`)
    return { limit, latency }
  },

  /** A lease not extended past its ttl: its signal aborts with LockLostError by its deadline. */
  async lost({ holder }) {
    const lease = await holder.acquire('lost', { ttl: 300 })
    const started = performance.now()
    // The deadline is counted from before the acquire was sent: it ends within the ttl of now.
    check(lease.deadline - started <= 300, `the deadline is within the ttl (${Math.round(lease.deadline - started)} ms away)`)
    let timer
    const reason = await new Promise((resolve) => {
      timer = setTimeout(resolve, 3_000, 'no abort within 3 s')
      lease.signal.addEventListener('abort', () => resolve(lease.signal.reason), { once: true })
    })
    clearTimeout(timer) // the check that the process exits by itself must measure fencelock, not us
    const after = Math.round(performance.now() - started)
    check(
      reason instanceof LockLostError && reason.code === 'LOCK_LOST',
      `the signal's reason is a LockLostError (got ${reason?.name ?? reason}: ${reason?.message})`,
    )
    check(!lease.held, 'a lost lease is not held')
    check((await lease.release()) === false, 'releasing a lost lease gives false')
    return { after, reason: reason.reason }
  },

  /** Reentrancy follows the call chain (AsyncLocalStorage), across awaits and timers. */
  async reentry({ holderClient, holder }) {
    const reentrant = createLocks({ redis: holderClient.raw, prefix, reentrant: true })
    instances.push(reentrant)
    const fences = await reentrant.withLock(
      'reentry',
      async (outer) => {
        await new Promise((resolve) => setTimeout(resolve)) // across a timer: the chain goes on in another task
        const inner = await reentrant.withLock('reentry', (lease) => lease.fence)
        const inTimer = await new Promise((resolve, reject) => setTimeout(() => reentrant.withLock('reentry', (lease) => lease.fence).then(resolve, reject), 5))
        return [outer.fence, inner, inTimer]
      },
      { ttl: 5_000 },
    )
    check(fences[1] === fences[0] && fences[2] === fences[0], `nested withLock re-enters the outer lease (fences ${fences.join(', ')})`)
    const err = await holder.withLock(
      'reentry-refused',
      async () => rejection(() => holder.acquire('reentry-refused', { wait: 2_000 }), 'a nested acquire without reentrant'),
      { ttl: 5_000 },
    )
    check(
      err instanceof LockReentryError && err.code === 'LOCK_REENTRY',
      `a nested acquire without reentrant fails at once with LockReentryError (got ${err?.name}: ${err?.message})`,
    )
    return { fence: fences[0] }
  },

  /** Telemetry reaches a subscriber by channel name on node:diagnostics_channel. */
  async telemetry({ holder }) {
    const seen = []
    const listener = (message) => seen.push(message)
    subscribe('fencelock:acquire', listener)
    try {
      const lease = await holder.acquire('telemetry', { ttl: 5_000 })
      await lease.release()
      const event = seen.find((m) => m.resource === 'telemetry')
      check(event?.outcome === 'acquired' && event.fence === lease.fence, `a fencelock:acquire event with the lease's fence (got ${JSON.stringify(seen)})`)
    } finally {
      unsubscribe('fencelock:acquire', listener)
    }
    return { events: seen.length }
  },

  /** The CommonJS build, as `require('fencelock')` loads it, works too. */
  async commonjs({ holderClient }) {
    const cjs = createRequire(import.meta.url)('fencelock')
    check(typeof cjs.createLocks === 'function', "require('fencelock') exports createLocks")
    const locks = cjs.createLocks({ redis: holderClient.raw, prefix })
    instances.push(locks)
    const lease = await locks.tryAcquire('commonjs', { ttl: 5_000 })
    check(lease !== null && lease.fence > 0, 'the CommonJS build acquires')
    check((await lease.release()) === true, 'the CommonJS build releases')
    const err = await rejection(() => locks.acquire(''), 'acquire of an empty name')
    check(err instanceof cjs.FencelockError && err.code === 'INVALID_ARGUMENT', `the CommonJS build's typed error (got ${err?.name} ${err?.code})`)
    await locks.close()
    return { fence: lease.fence }
  },

  /** Symbol.asyncDispose, called by hand (what `await using` and TypeScript's downlevel call), releases. */
  async asyncDispose({ holder }) {
    const lease = await holder.acquire('dispose', { ttl: 5_000 })
    check(typeof lease[Symbol.asyncDispose] === 'function', 'the lease has Symbol.asyncDispose')
    await lease[Symbol.asyncDispose]()
    const info = await holder.inspect('dispose')
    check(!info.held, `Symbol.asyncDispose released the lock (${JSON.stringify(info)})`)
    return {}
  },

  /** `await using` syntax (in its own module: a runtime without it cannot even parse the file). */
  async awaitUsing({ holder }) {
    const { holdWithAwaitUsing } = await import('./await-using.mjs')
    const { insideHeld, fence } = await holdWithAwaitUsing(holder, 'await-using')
    const info = await holder.inspect('await-using')
    check(insideHeld && fence > 0, 'the lease was held inside the block')
    check(!info.held, `leaving the block released the lock (${JSON.stringify(info)})`)
    return { fence }
  },
}

let context
await step('connect', async () => {
  const holderClient = await connect()
  clients.push(holderClient)
  const waiterClient = await connect()
  clients.push(waiterClient)
  const holder = createLocks({ redis: holderClient.raw, prefix })
  const waiter = createLocks({ redis: waiterClient.raw, prefix })
  instances.push(holder, waiter)
  context = { holderClient, waiterClient, holder, waiter }
  const resolved = {}
  for (const name of ['fencelock', 'ioredis', 'redis']) resolved[name] = import.meta.resolve(name)
  return { runtime, client: clientName, resolved }
})
if (context) for (const [name, body] of Object.entries(steps)) await step(name, () => body(context))

// Always, and last: close everything; after this line nothing may hold the process open.
await step('close', async () => {
  const closing = await Promise.allSettled(instances.map((locks) => locks.close()))
  const quitting = await Promise.allSettled(clients.map((client) => client.quit()))
  for (const outcome of [...closing, ...quitting]) if (outcome.status === 'rejected') throw outcome.reason
  check(
    instances.every((locks) => locks.closed),
    'every instance reports closed',
  )
  check(context !== undefined, 'connected')
  return { failed }
})
console.log('closed')
