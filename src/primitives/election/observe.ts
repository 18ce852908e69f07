import type { WakeSource } from '../../topology/backend.js'
import type { ElectionInfo, Leader } from './election.js'

/** Where an observer's news comes from: the observers' channel, and a read of the election. */
export interface ObserveSource {
  readonly wake: WakeSource
  readonly channel: string
  read(): Promise<ElectionInfo>
  /**
   * On a quorum a message is one node's word, not the majority's: it only makes the observer read
   * (merged over the nodes). On one node (or a cluster slot) the message is the state itself.
   */
  readonly consensus: boolean
}

/** A state in observation order: terms by fence, proclamations by version, the vacancy after its term. */
type Rank = readonly [fence: number, version: number]
const VACANT = Infinity
const later = (a: Rank, b: Rank): boolean => a[0] > b[0] || (a[0] === b[0] && a[1] > b[1])

/** A message of lib/term.lua: "<fence>.<version> <ttl> <value>" or "<fence>.v". */
function parseMessage(message: string): { rank: Rank; leader: Leader | null } | undefined {
  const m = /^(\d+)\.(\d+|v)(?: (-?\d+) ([\s\S]*))?$/.exec(message)
  if (!m) return undefined
  const fence = Number(m[1])
  if (m[2] === 'v') return { rank: [fence, VACANT], leader: null }
  const version = Number(m[2])
  return { rank: [fence, version], leader: { value: m[4] ?? '', fence, version, ttl: Math.max(0, Number(m[3])) } }
}

const RETRY_MS = 1_000

/**
 * Yields the leader now, then every change (new term, proclamation, vacancy) in order, never a
 * state older than one already yielded. Pushed: the observers' channel brings each change; a read
 * when the leader's ttl runs out (a leader killed -9 tells nobody) and after a resubscribe (messages
 * may have been missed). No polling: a quiet election costs one read per term renewal period.
 */
export async function* observeElection(source: ObserveSource, signal: AbortSignal | undefined): AsyncGenerator<Leader | null, void, undefined> {
  if (signal?.aborted) return
  const queue: (Leader | null)[] = []
  let last: Rank | undefined
  let timer: NodeJS.Timeout | undefined
  let notify: (() => void) | undefined
  let ended = false
  const wakeUp = () => {
    notify?.()
    notify = undefined
  }
  const recheckIn = (ms: number) => {
    clearTimeout(timer)
    // The key expires on the server's clock: a few ms past its ttl it is surely gone.
    timer = setTimeout(() => void read(), ms + 5)
    timer.unref()
  }
  const offer = (rank: Rank, leader: Leader | null) => {
    if (leader) recheckIn(leader.ttl)
    else clearTimeout(timer)
    if (last && !later(rank, last)) return
    last = rank
    queue.push(leader)
    wakeUp()
  }
  // One read at a time (one more if asked meanwhile), so that reads report states in order.
  let reading: Promise<void> | undefined
  let again = false
  const read = (): Promise<void> => {
    if (reading) {
      again = true
      return reading
    }
    reading = readOnce().finally(() => {
      reading = undefined
      if (again && !ended) {
        again = false
        void read()
      }
    })
    return reading
  }
  const readOnce = async () => {
    if (ended) return
    try {
      const info = await source.read()
      if (ended) return
      // The term as a message tells it (what `observe` yields): not who holds it since when.
      if (info.leader) {
        const { value, fence, version, ttl } = info.leader
        offer([fence, version], { value, fence, version, ttl })
      } else if (info.settling)
        recheckIn(RETRY_MS) // its confirmation brings a message sooner
      // A vacancy ranks after the term that ended: on one node that is the last fence handed
      // out; on a quorum a node's fence may belong to a grant that never became a term, so the
      // vacancy is ranked after the last term this observer saw (reads are in order).
      else offer([(source.consensus ? last?.[0] : info.fence) ?? 0, VACANT], null)
    } catch {
      // Redis unreachable or slow: look again soon; the iterator itself never fails for it.
      if (!ended) recheckIn(RETRY_MS)
    }
  }
  const onMessage = (message: string) => {
    if (source.consensus) return void read()
    const state = parseMessage(message)
    if (state) offer(state.rank, state.leader)
  }
  const onAbort = () => {
    ended = true
    wakeUp()
  }
  signal?.addEventListener('abort', onAbort, { once: true })
  source.wake.retain()
  const stopResync = source.wake.onResync(() => void read())
  try {
    await source.wake.listen(source.channel, onMessage).catch(() => {})
    await read()
    while (!ended) {
      const next = queue.shift()
      if (next !== undefined) {
        yield next
        continue
      }
      await new Promise<void>((resolve) => (notify = resolve))
    }
  } finally {
    ended = true
    clearTimeout(timer)
    signal?.removeEventListener('abort', onAbort)
    stopResync()
    source.wake.unlisten(source.channel, onMessage)
    void source.wake.release().catch(() => {})
  }
}
