/** Ends the CLI with `code` after printing `message` to stderr (a usage error is code 2). */
export class Exit extends Error {
  override readonly name = 'Exit'
  constructor(
    readonly code: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

export const log = (line: string): void => void process.stderr.write(`fencelock: ${line}\n`)
export const print = (line: string): void => void process.stdout.write(`${line}\n`)

/** Waits for `promise` at most `ms`: a hung Redis must not keep the CLI from exiting. */
export const within = (ms: number, promise: Promise<unknown>): Promise<unknown> =>
  Promise.race([promise.catch(() => {}), new Promise((resolve) => setTimeout(resolve, ms).unref())])
