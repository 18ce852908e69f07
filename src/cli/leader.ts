import type { Election, Leader } from '../index.js'
import { log, print } from './exit.js'

const describe = (leader: Leader | null): string =>
  leader ? `value=${JSON.stringify(leader.value)} fence=${leader.fence} version=${leader.version} ttl=${leader.ttl}` : 'no leader'

/** How often `leader --watch` asks whether Redis answers, and how long it gives it (ms). */
const PROBE_MS = 2_000

/**
 * `fencelock leader <name>`: the leader now (exit 0, or 1 when vacant), or with `watch` every
 * change as the election pushes it, until SIGINT or SIGTERM (exit 0).
 */
export async function showLeader(election: Election, options: { json: boolean; watch: boolean }): Promise<number> {
  const show = (leader: Leader | null) => print(options.json ? JSON.stringify(leader) : describe(leader))
  if (!options.watch) {
    const leader = await election.leader()
    show(leader)
    return leader ? 0 : 1
  }
  const stop = new AbortController()
  const signals = ['SIGINT', 'SIGTERM'] as const
  const onSignal = () => stop.abort()
  for (const signal of signals) process.on(signal, onSignal)
  const probing = probe(election, stop.signal)
  try {
    for await (const leader of election.observe({ signal: stop.signal })) show(leader)
    return 0
  } finally {
    stop.abort()
    await probing
    for (const signal of signals) process.off(signal, onSignal)
  }
}

/**
 * While watching, says on stderr when Redis does not answer (and when it answers again), as
 * `inspect --watch` does on each refresh: the observer itself stays silent while Redis is down
 * (it keeps trying, and yields nothing until it can read), so without this a watch of a paused
 * or stopped Redis would look like an election where nothing happens.
 */
async function probe(election: Election, stop: AbortSignal): Promise<void> {
  let failing = false
  while (!stop.aborted) {
    const read: Promise<unknown> = election.leader().then(
      () => undefined,
      (err: unknown) => err ?? new Error('failed'),
    )
    let outcome = await within(read, PROBE_MS, stop)
    while (outcome === SILENT && !stop.aborted) {
      log(`Redis did not answer within ${PROBE_MS} ms; still watching`)
      failing = true
      outcome = await within(read, PROBE_MS, stop)
    }
    if (stop.aborted) return
    if (outcome !== undefined) {
      log(`Redis did not answer: ${outcome instanceof Error ? outcome.message : String(outcome)}; still watching`)
      failing = true
    } else if (failing) {
      log('Redis answers again')
      failing = false
    }
    await within(new Promise(() => {}), PROBE_MS, stop)
  }
}

const SILENT = Symbol('silent')

/** What `work` settles with, or SILENT after `ms` or when `stop` aborts. */
function within<T>(work: Promise<T>, ms: number, stop: AbortSignal): Promise<T | typeof SILENT> {
  return new Promise((resolve) => {
    const done = (value: T | typeof SILENT) => {
      clearTimeout(timer)
      stop.removeEventListener('abort', aborted)
      resolve(value)
    }
    const aborted = () => done(SILENT)
    const timer = setTimeout(() => done(SILENT), ms)
    stop.addEventListener('abort', aborted, { once: true })
    work.then(done, () => done(SILENT))
  })
}
