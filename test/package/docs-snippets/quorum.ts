// @ts-nocheck: a prelude of test/package/docs-snippets.test.ts, checked and run with its block in place of "// @snippet"
// Before docs/deployment.md's quorum block: three clients of independent masters.
import { Cluster, Redis } from 'ioredis'
import { createLocks } from 'fencelock'

declare const r1: Redis, r2: Redis, r3: Redis
// @snippet
