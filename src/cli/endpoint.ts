// What every client library needs from the connection the command line describes: the host,
// port and database of a URL, the credentials, the TLS files; and the error for a node that
// cannot be reached.
import { readFileSync } from 'node:fs'
import type { Connection } from './command.js'
import { Exit, isPermissionError, Status } from './exit.js'
import { redact } from './values.js'

/** Host, port, database and credentials of one URL; the URL's user and password win over --user and REDIS_PASSWORD. */
export interface Endpoint {
  url: string
  host: string
  port: number
  db: number
  tls: boolean
}

export function endpoint(url: string): Endpoint {
  const u = new URL(url)
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0
  if (!Number.isInteger(db) || db < 0) throw new Exit(2, `Invalid --redis value ${JSON.stringify(redact(url))}: the path must be a database number, such as /0`)
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname
  return { url, host, port: u.port ? Number(u.port) : 6379, db, tls: u.protocol === 'rediss:' }
}

export function credentials(url: string, connection: Connection, env: NodeJS.ProcessEnv): { username?: string; password?: string } {
  const u = new URL(url)
  const username = u.username ? decodeURIComponent(u.username) : connection.user
  const password = u.password ? decodeURIComponent(u.password) : env.REDIS_PASSWORD || undefined
  return { ...(username !== undefined && { username }), ...(password !== undefined && { password }) }
}

export function tlsOptions(connection: Connection): { ca?: Buffer; cert?: Buffer; key?: Buffer } {
  const read = (file: string | undefined, flag: string) => {
    if (file === undefined) return undefined
    try {
      return readFileSync(file)
    } catch (err) {
      throw new Exit(2, `Invalid ${flag} value ${JSON.stringify(file)}: ${(err as Error).message}`, { cause: err })
    }
  }
  const ca = read(connection.tls.ca, '--tls-ca')
  const cert = read(connection.tls.cert, '--tls-cert')
  const key = read(connection.tls.key, '--tls-key')
  return { ...(ca && { ca }), ...(cert && { cert }), ...(key && { key }) }
}

export const unreachable = (url: string, err: unknown) =>
  new Exit(
    isPermissionError(err) ? Status.NOPERM : Status.UNAVAILABLE,
    `cannot connect to Redis at ${redact(url)}: ${(err as Error)?.message ?? String(err)}`,
    { cause: err },
  )
