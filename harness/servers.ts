// Other Redis and Valkey versions than the one on PATH: ../shared/servers/build.sh builds one from
// its unmodified release sources into a cache folder (~40 s the first time, then at once) and
// prints the folder with its redis-server. Tests of server behaviour run on each of them.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** Every version the tests run on, oldest first: 6.0 only to check that it is refused. */
export const SERVERS = ['redis-6.0.20', 'redis-6.2.16', 'redis-7.2.6', 'redis-7.4.1', 'valkey-7.2.7', 'valkey-8.0.1'] as const
export type ServerName = (typeof SERVERS)[number]

/** build.sh beside the checkout (`../shared/servers/`), or where FENCELOCK_SERVERS_DIR says. */
export function buildScript(): string {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
  const dir = process.env.FENCELOCK_SERVERS_DIR ?? path.resolve(root, '..', 'shared', 'servers')
  return path.join(dir, 'build.sh')
}

/**
 * The redis-server binary of `name`, built if it is not yet (up to a minute); or why there is
 * none. In CI a missing build script or a failed build is fatal, elsewhere the caller skips with
 * the printed reason.
 */
export function serverBinary(name: ServerName): { server: string } | { missing: string } {
  const script = buildScript()
  const fail = (reason: string) => {
    if (process.env.CI === 'true') throw new Error(`[fencelock server versions] ${reason}. In CI this is fatal: .ci/run builds them.`)
    console.warn(`[fencelock server versions] skipping ${name}: ${reason}`)
    return { missing: reason }
  }
  if (!existsSync(script)) return fail(`${script} is not there (the server sources live in ../shared/servers beside the checkout)`)
  const built = spawnSync('bash', [script, name], { encoding: 'utf8', timeout: 300_000 })
  if (built.status !== 0) return fail(`build.sh ${name} failed: ${(built.stderr || built.error?.message || '').trim().slice(-500)}`)
  const bin = built.stdout.trim().split('\n').pop() ?? ''
  const server = path.join(bin, 'redis-server')
  if (!existsSync(server)) return fail(`build.sh ${name} printed ${bin}, which has no redis-server`)
  return { server }
}
