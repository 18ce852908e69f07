import { configDefaults, defineConfig } from 'vitest/config'

/**
 * The per-client suites whose matrix includes Valkey GLIDE beside ioredis and node-redis (every
 * other per-client suite runs with ioredis and node-redis only, for time: `npm run test:glide`
 * runs all of them with GLIDE). What they cover: acquire/extend/release and waiting, wake-ups and
 * their loss, loss reasons, every primitive, a Redis Cluster, replicas (WAIT), the guards and
 * errors. test/redis/glide.test.ts checks what only GLIDE does, with GLIDE itself.
 */
const WITH_GLIDE = [
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
]

export default defineConfig({
  test: {
    // Bundles the CLI and the workers that tests start as processes (harness/prebuilt.ts).
    globalSetup: ['harness/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Every test file starts its own redis-server processes. The tests wait for causes, not for
    // the clock, and most of a file's time is spent waiting on servers and processes, so more
    // files run at once than there are cores (measured on 2 cores: see README's test section).
    maxWorkers: 4,
    fileParallelism: true,
    projects: [
      { extends: true, test: { name: 'fencelock', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...WITH_GLIDE] } },
      { extends: true, test: { name: 'with-glide', include: WITH_GLIDE, env: { FENCELOCK_ADAPTERS: 'ioredis,node-redis,glide' } } },
    ],
  },
})
