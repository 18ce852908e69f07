import type { Election, Leader } from '../index.js'
import { print } from './exit.js'

const describe = (leader: Leader | null): string =>
  leader ? `value=${JSON.stringify(leader.value)} fence=${leader.fence} version=${leader.version} ttl=${leader.ttl}` : 'no leader'

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
  try {
    for await (const leader of election.observe({ signal: stop.signal })) show(leader)
    return 0
  } finally {
    for (const signal of signals) process.off(signal, onSignal)
  }
}
