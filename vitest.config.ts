import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Every test file starts its own redis-server processes; two cores is the budget.
    maxWorkers: 2,
    fileParallelism: true,
  },
})
