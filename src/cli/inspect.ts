// `fencelock inspect`: what the library's inspect shows for each resource found under the prefix
// (or for one exact mutex), as a table or as JSON, once or every --interval.
import { createLocks, type LockInfo, type Locks, type LocksOptions } from '../index.js'
import { bold, painter } from './color.js'
import { findResources, type Found, type Kind, type ScanNode } from './scan.js'

const INSPECT_CONCURRENCY = 16

/** One holder of a resource: a mutex's holder, a semaphore's permit, a reader or the writer. */
export interface Holder {
  readonly token: string
  /** Its fence where the library tells it (a mutex's holder, a writer); null otherwise. */
  readonly fence: number | null
  /** Remaining ttl in ms. */
  readonly ttl: number
  /** A read/write lock's side. */
  readonly mode?: 'read' | 'write'
}

/** One line of the listing (one JSON object of `--json`). */
export interface Row {
  readonly kind: Kind
  readonly resource: string
  readonly holders: readonly Holder[]
  /** The last fence handed out for the resource, or null if none is kept. */
  readonly fence: number | null
  readonly waiters: number
  /** A semaphore's limit, while permits are held (it is stored only then). */
  readonly limit?: number
}

/**
 * Reads each kind through the library's public API. A semaphore handle needs its limit, which the
 * key layout stores while permits are held: a first inspect with limit 1 reads it, and a second
 * one with that limit reads every permit. Each limit gets a `Locks` of its own, because one
 * instance refuses two limits for one name (and a watched semaphore may change its limit).
 */
export class Inspector {
  readonly #byLimit = new Map<number, Locks>()
  constructor(
    readonly locks: Locks,
    readonly options: LocksOptions,
  ) {}

  #limited(limit: number): Locks {
    let locks = this.#byLimit.get(limit)
    if (!locks) this.#byLimit.set(limit, (locks = createLocks(this.options)))
    return locks
  }

  /** A handle on the semaphore `name` with the limit its held permits were taken under. */
  semaphore(name: string, limit: number) {
    return this.#limited(limit).semaphore(name, { limit })
  }

  async row({ kind, name }: Found): Promise<Row> {
    if (kind === 'mutex') return mutexRow(await this.locks.inspect(name))
    if (kind === 'read-write') {
      const info = await this.locks.readWrite(name).inspect()
      const writer = info.writer ? [{ token: info.writer.token, fence: info.fence, ttl: info.writer.ttl, mode: 'write' as const }] : []
      const readers = info.readers.map((r) => ({ token: r.token, fence: null, ttl: r.ttl, mode: 'read' as const }))
      return { kind, resource: name, holders: [...writer, ...readers], fence: info.fence, waiters: info.waiters }
    }
    const probe = await this.#limited(1).semaphore(name, { limit: 1 }).inspect()
    // A handle of limit 1 sees slot 0 only: permits held in other slots show only under the stored limit.
    const info = probe.limit === 1 ? probe : await this.#limited(probe.limit).semaphore(name, { limit: probe.limit }).inspect()
    return {
      kind,
      resource: name,
      holders: info.permits.map((p) => ({ token: p.token, fence: null, ttl: p.ttl })),
      fence: info.fence,
      waiters: info.waiters,
      ...(info.held > 0 && { limit: info.limit }),
    }
  }

  /** Every resource matching `pattern` (all of them when `all`), else only the held or waited-for ones. */
  async rows(nodes: readonly ScanNode[], prefix: string, pattern: string | undefined, all: boolean): Promise<Row[]> {
    const found = await findResources(nodes, prefix, pattern)
    // A bounded number of inspect calls in flight: a listing may find thousands of resources.
    const rows: Row[] = new Array(found.length)
    let next = 0
    const worker = async () => {
      while (next < found.length) {
        const i = next++
        rows[i] = await this.row(found[i]!)
      }
    }
    await Promise.all(Array.from({ length: Math.min(INSPECT_CONCURRENCY, found.length) }, worker))
    return all || pattern !== undefined ? rows : rows.filter((r) => r.holders.length > 0 || r.waiters > 0)
  }

  async close(): Promise<void> {
    await Promise.all([...this.#byLimit.values()].map((l) => l.close()))
  }
}

export function mutexRow(info: LockInfo): Row {
  const holders = info.held && info.token !== null ? [{ token: info.token, fence: info.fence, ttl: info.ttl ?? 0 }] : []
  return { kind: 'mutex', resource: info.resource, holders, fence: info.fence, waiters: info.waiters }
}

/** The one-line view of one exact mutex (as earlier versions printed it). */
export function describeLock(info: LockInfo): string {
  const fence = info.fence ?? 'none'
  return info.held
    ? `${info.resource}: held, fence ${fence}, ttl ${info.ttl} ms, ${info.waiters} waiting, token ${info.token}`
    : `${info.resource}: free, last fence ${fence}, ${info.waiters} waiting`
}

/** A ttl as people read it: 850ms, 9.8s, 4m05s, 2h10m. */
export function formatTtl(ms: number): string {
  if (ms < 1_000) return `${ms}ms`
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)}s`
  const s = Math.floor(ms / 1_000)
  if (s < 3_600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
  return `${Math.floor(s / 3_600)}h${String(Math.floor((s % 3_600) / 60)).padStart(2, '0')}m`
}

const holderText = (h: Holder) => `${h.mode ? `${h.mode} ` : ''}${h.token}${h.fence !== null ? ` fence ${h.fence}` : ''} ${formatTtl(h.ttl)} left`

/** The listing as an aligned table: one line per holder (a resource with none: one line with "-"). */
export function formatTable(rows: readonly Row[], color: boolean): string {
  if (rows.length === 0) return 'no held or waited-for locks'
  const paint = painter(color)
  const head = ['KIND', 'RESOURCE', 'HOLDERS (token, fence, ttl left)', 'LAST FENCE', 'WAITERS']
  const lines: string[][] = []
  for (const r of rows) {
    const resource = r.limit !== undefined ? `${r.resource} (${r.holders.length}/${r.limit})` : r.resource
    const holders = r.holders.length > 0 ? r.holders.map(holderText) : ['-']
    holders.forEach((h, i) => lines.push(i === 0 ? [r.kind, resource, h, r.fence === null ? '-' : String(r.fence), String(r.waiters)] : ['', '', h, '', '']))
  }
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)))
  const join = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd()
  return [paint(bold)(join(head)), ...lines.map(join)].join('\n')
}
