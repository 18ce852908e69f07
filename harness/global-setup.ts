// The test run's global setup: bundles the programs the tests start as processes (see prebuilt.ts),
// so that each start costs a node start, not a TypeScript compile. The workers inherit the folder's name.
import { prebuild, removePrebuilt } from './prebuilt.js'

export default async function setup(): Promise<() => void> {
  const dir = await prebuild()
  process.env.FENCELOCK_PREBUILT = dir
  return () => removePrebuilt(dir)
}
