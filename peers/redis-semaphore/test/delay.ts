// redis-semaphore's src/utils delay (the suite's tests import it from the library's internals).
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
