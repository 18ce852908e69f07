// Where the bank lives: DATABASE_URL, else the PG* variables when PGHOST is set, else
// postgres@127.0.0.1:5432/test (then root@, for machines where that is the local superuser).
import pg from 'pg'

export interface PgTarget {
  connectionString?: string
  connectionTimeoutMillis: number
}

function candidates(): PgTarget[] {
  const timeout = { connectionTimeoutMillis: 3_000 }
  if (process.env.DATABASE_URL) return [{ connectionString: process.env.DATABASE_URL, ...timeout }]
  if (process.env.PGHOST) return [{ ...timeout }] // pg reads PGHOST, PGPORT, PGUSER, PGDATABASE itself
  return ['postgres', 'root'].map((user) => ({ connectionString: `postgres://${user}@127.0.0.1:5432/test`, ...timeout }))
}

/** The first target that answers `SELECT 1`, or the reasons none did. */
export async function findPg(): Promise<{ target: PgTarget } | { error: string }> {
  const errors: string[] = []
  for (const target of candidates()) {
    const client = new pg.Client(target)
    client.on('error', () => {})
    try {
      await client.connect()
      await client.query('SELECT 1')
      return { target }
    } catch (err) {
      errors.push(`${target.connectionString ?? `PGHOST=${process.env.PGHOST}`}: ${(err as Error).message}`)
    } finally {
      await client.end().catch(() => {})
    }
  }
  return { error: `PostgreSQL is not reachable (${errors.join('; ')}); set DATABASE_URL or start PostgreSQL with a "test" database` }
}
