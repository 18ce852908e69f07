// The harness's one way to wait. Tests wait for a cause (`until`); `sleep` is only for time that
// must itself pass (a TTL running out, a pause held for a while).

/** Resolves after `ms`: only where time itself must pass. To wait for something to happen, use `until`. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)))

export interface UntilOptions {
  /** Gives up after this many ms (default 5,000): a bound on a cause that should come, not a measurement. */
  readonly timeout?: number
  /** Looks again every this many ms (default 10). */
  readonly every?: number
}

/**
 * Looks at `condition` until it returns true (or a value other than false/undefined/null, which
 * it resolves with); rejects naming `what` after `timeout` ms. A condition that throws rejects at once.
 */
export async function until<T>(
  what: string,
  condition: () => T | false | undefined | null | Promise<T | false | undefined | null>,
  options: UntilOptions = {},
): Promise<T> {
  const timeout = options.timeout ?? 5_000
  const every = options.every ?? 10
  const started = performance.now()
  for (;;) {
    const value = await condition()
    if (value !== false && value !== undefined && value !== null) return value
    if (performance.now() - started > timeout) throw new Error(`timed out after ${timeout} ms waiting until ${what}`)
    await sleep(every)
  }
}
