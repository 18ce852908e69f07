// Postgres for the fencing-token examples (a real resource that rejects stale tokens).
// Local databases run with trust auth, so which role exists decides whether we connect.
import pg from 'pg'

export interface PgConfig {
  connectionString: string
  connectionTimeoutMillis: number
}

const DEFAULT_HOST = '127.0.0.1:5432/test'

let probe: Promise<PgConfig | undefined> | undefined
let found: PgConfig | undefined
const errors: string[] = []

function candidates(): string[] {
  if (process.env.DATABASE_URL) return [process.env.DATABASE_URL]
  return ['postgres', 'root'].map((user) => `postgres://${user}@${DEFAULT_HOST}`)
}

async function tryConnect(connectionString: string): Promise<PgConfig | undefined> {
  const config = { connectionString, connectionTimeoutMillis: 2_000 }
  const client = new pg.Client(config)
  try {
    await client.connect()
    await client.query('SELECT 1')
    return config
  } catch (err) {
    errors.push(`${connectionString}: ${err instanceof Error ? err.message : String(err)}`)
    return undefined
  } finally {
    await client.end().catch(() => undefined)
  }
}

async function findConfig(): Promise<PgConfig | undefined> {
  for (const url of candidates()) {
    const config = await tryConnect(url)
    if (config) return config
  }
  return undefined
}

export async function pgAvailable(): Promise<boolean> {
  probe ??= findConfig().then((config) => (found = config))
  return (await probe) !== undefined
}

/** For `describe.skipIf(!(await requirePgOrSkip()))`: CI must never silently skip the Postgres suites. */
export async function requirePgOrSkip(): Promise<boolean> {
  if (await pgAvailable()) return true
  const reason = `Postgres is not reachable (${errors.join('; ')}); set DATABASE_URL or start Postgres with a "test" database`
  if (process.env.CI === 'true') {
    throw new Error(`[fencelock tests] ${reason}. In CI this is fatal: start Postgres instead of skipping.`)
  }
  console.warn(`[fencelock tests] skipping Postgres suites: ${reason}.`)
  return false
}

/** The connection config that worked; call after pgAvailable()/requirePgOrSkip() resolved true. */
export function pgConfig(): PgConfig {
  if (!found) throw new Error('pgConfig(): no working Postgres config; await requirePgOrSkip() first')
  return { ...found }
}
