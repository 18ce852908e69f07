import { defineConfig } from 'vitest/config'

/**
 * The per-client suites that run once more with Valkey GLIDE (`npm test` runs them; every other
 * per-client suite runs with ioredis and node-redis only, for time: `npm run test:glide` runs all
 * of them with GLIDE). What they cover: acquire/extend/release and waiting, wake-ups and their
 * loss, loss reasons, every primitive, a Redis Cluster, replicas (WAIT), the guards and errors.
 */
const GLIDE_SUITES = [
  'test/api/api.test.ts',
  'test/scenarios/wakeups.test.ts',
  'test/scenarios/loss-reason.test.ts',
  'test/scenarios/lost-lease.test.ts',
  'test/topology/cluster.test.ts',
  'test/topology/replicas.test.ts',
  'test/guards/fenced.test.ts',
  'test/primitives/semaphore/semaphore.test.ts',
  'test/primitives/rw-lock/rw-lock.test.ts',
  'test/primitives/multi/multi-lock.test.ts',
  'test/primitives/election/election.test.ts',
  'test/redis/glide.test.ts',
]

export default defineConfig({
  test: {
    // Bundles the CLI and the workers that tests start as processes (harness/prebuilt.ts).
    globalSetup: ['harness/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Every test file starts its own redis-server processes; two cores is the budget.
    maxWorkers: 2,
    fileParallelism: true,
    projects: [
      { extends: true, test: { name: 'fencelock', include: ['test/**/*.test.ts'] } },
      { extends: true, test: { name: 'glide', include: GLIDE_SUITES, env: { FENCELOCK_ADAPTERS: 'glide' } } },
    ],
  },
})
