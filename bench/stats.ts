// Small statistics helpers shared by the coordinator and the workers.

/**
 * A clock shared by the processes of one machine, in ms: CLOCK_MONOTONIC (process.hrtime), which
 * is system-wide on Linux. `performance.timeOrigin + performance.now()` was measured to differ by
 * up to ~1 ms between processes (the origin is sampled at startup), too coarse for sub-ms handoffs.
 */
export const clock = (): number => Number(process.hrtime.bigint()) / 1e6

/** Nearest-rank percentile of `values` (need not be sorted); NaN for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = Float64Array.from(values).sort()
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank] ?? Number.NaN
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Number formatting for tables: 3 significant digits, thousands separated, '-' for missing. */
export function fmt(value: number | undefined | null, digits = 3): string {
  if (value === undefined || value === null || Number.isNaN(value)) return '-'
  if (!Number.isFinite(value)) return String(value)
  const abs = Math.abs(value)
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US')
  if (abs === 0) return '0'
  const decimals = Math.max(0, digits - 1 - Math.floor(Math.log10(abs)))
  return value.toFixed(Math.min(decimals, 4))
}
