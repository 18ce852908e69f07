// --watch: a snapshot every interval until SIGINT or SIGTERM, which end it cleanly (exit 0).
import { dim, painter } from './color.js'

const HOME_AND_CLEAR = '\u001b[H\u001b[2J'
const HIDE_CURSOR = '\u001b[?25l'
const SHOW_CURSOR = '\u001b[?25h'

export interface WatchOptions {
  readonly interval: number
  /** On a terminal: redraw in place with cursor codes; otherwise each snapshot then a blank line. */
  readonly tty: boolean
  readonly color: boolean
  readonly title: string
  readonly write: (text: string) => void
  /** A failed refresh (Redis down for a moment) is reported and the watch goes on. */
  readonly onError: (err: unknown) => void
}

/** Prints `snapshot()` every `interval` ms until SIGINT or SIGTERM; resolves with the exit code 0. */
export async function watch(snapshot: () => Promise<string>, options: WatchOptions): Promise<number> {
  const { interval, tty, write } = options
  const stop = new AbortController()
  const onSignal = () => stop.abort()
  const signals = ['SIGINT', 'SIGTERM'] as const
  for (const s of signals) process.on(s, onSignal)
  if (tty) write(HIDE_CURSOR)
  const began = performance.now()
  let refreshes = 0
  try {
    while (!stop.signal.aborted) {
      const started = performance.now()
      let text: string | undefined
      try {
        text = await snapshot()
      } catch (err) {
        if (stop.signal.aborted) break
        options.onError(err)
      }
      if (stop.signal.aborted) break
      if (text !== undefined) {
        // Elapsed time, not the wall clock: src/ reads no wall clock (a test checks it).
        const since = `refresh ${++refreshes}, ${((performance.now() - began) / 1000).toFixed(0)} s since start`
        if (tty) write(`${HOME_AND_CLEAR}${painter(options.color)(dim)(`${options.title}, every ${interval} ms, ${since}`)}\n\n${text}\n`)
        else write(`${text}\n\n`)
      }
      await sleep(Math.max(0, interval - (performance.now() - started)), stop.signal)
    }
    return 0
  } finally {
    if (tty) write(SHOW_CURSOR)
    for (const s of signals) process.off(s, onSignal)
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}
