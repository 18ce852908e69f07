// @ts-nocheck: type-checked by test/types.test.ts against the built package (this line removed), not by the repository's tsconfig
// A consumer of the published types (ESM: `import` resolves dist/index.d.ts). Never run, only
// type-checked: every supported client major is accepted as `redis`, a URL string is not.
import { GlideClient, GlideClusterClient } from '@valkey/valkey-glide'
import { Cluster as IORedisCluster5, Redis as IORedis5 } from 'ioredis'
import { Cluster as IORedisCluster6, Redis as IORedis6 } from 'ioredis6'
import { Cluster as ValkeyCluster, Redis as Valkey } from 'iovalkey'
import { createClient as createClient5, createCluster as createCluster5, createSentinel as createSentinel5 } from 'redis'
import { createClient as createClient4, createCluster as createCluster4 } from 'redis4'
import { createClient as createClient6, createCluster as createCluster6, createSentinel as createSentinel6 } from 'redis6'
import {
  claimFence,
  createLocks,
  fencedSet,
  FencelockError,
  LockLostError,
  type AcquireOptions,
  type Lease,
  type LockInfo,
  type Locks,
  type LocksOptions,
  type RedisClient,
} from 'fencelock'

declare const url: string

const ioredis5 = new IORedis5(url)
const ioredis6 = new IORedis6(url)
const valkey = new Valkey(url)
const sentinel5 = new IORedis5({ sentinels: [{ host: '127.0.0.1', port: 26379 }], name: 'mymaster' })
const node4 = createClient4({ url })
const node5 = await createClient5({ url }).connect()
const node6 = await createClient6({ url, RESP: 3 }).connect()

const clients: RedisClient[] = [
  ioredis5,
  ioredis6,
  valkey,
  sentinel5,
  new IORedisCluster5([{ port: 7000 }]),
  new IORedisCluster6([{ port: 7000 }]),
  new ValkeyCluster([{ port: 7000 }]),
  node4,
  node5,
  node6,
  createCluster4({ rootNodes: [{ url }] }),
  await createCluster5({ rootNodes: [{ url }] }).connect(),
  createCluster6({ rootNodes: [{ url }] }),
  await createSentinel5({ name: 'mymaster', sentinelRootNodes: [{ host: '127.0.0.1', port: 26379 }] }).connect(),
  createSentinel6({ name: 'mymaster', sentinelRootNodes: [{ host: '127.0.0.1', port: 26379 }] }),
  await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port: 6379 }] }),
  await GlideClusterClient.createClient({ addresses: [{ host: '127.0.0.1', port: 7000 }] }),
]

const options: LocksOptions = { redis: node5, ttl: 10_000 }
const locks: Locks = createLocks(options)
const quorum = createLocks({ redis: [ioredis5, node4, valkey] as const, maxTtl: 30_000 })
for (const redis of clients) createLocks({ redis })

const acquire: AcquireOptions = { ttl: 5_000, wait: 1_000, signal: AbortSignal.timeout(1_000) }
{
  await using lease = await locks.acquire('account:1', acquire)
  lease.signal.addEventListener('abort', () => {
    const reason: unknown = lease.signal.reason
    if (reason instanceof LockLostError) console.error(reason.code, reason.resource)
  })
  const fence: number = lease.fence
  const claimed: boolean = await claimFence(ioredis6, 'balance:1', fence)
  const written: boolean = await fencedSet(node6, 'balance:1', '100', fence, { px: 60_000 })
  console.log(claimed, written)
}
const maybe: Lease | null = await quorum.tryAcquire('account:2')
const fences: number = await locks.withLock('account:3', (lease) => lease.fence)
const info: LockInfo = await locks.inspect('account:3')
const failure: unknown = await locks.acquire('x').catch((err: unknown) => err)
if (failure instanceof FencelockError) console.error(failure.code)
console.log(maybe?.fence, fences, info.fence)
await locks.close()

// @ts-expect-error: a URL is not a client
createLocks({ redis: url })
// @ts-expect-error: nor in quorum mode
createLocks({ redis: [url, url, url] })
// @ts-expect-error: nor connection options
createLocks({ redis: { host: '127.0.0.1', port: 6379 } })
// @ts-expect-error: fencedSet takes a client
await fencedSet('redis://127.0.0.1:6379', 'k', 'v', 1)
// @ts-expect-error: claimFence takes a single client, not a quorum
await claimFence([ioredis5, node5], 'k', 1)
