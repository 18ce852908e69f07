// `fencelock inspect`: what the library's inspect shows for each resource (and election) found
// under the prefix, or for one exact name, as a table or as JSON, once or every --interval.
import { createLocks, type ElectionInfo, type HolderInfo, type LockInfo, type Locks, type LocksOptions } from '../index.js'
import { bold, painter } from './color.js'
import { findResources, type Found, type Kind, type ScanNode } from './scan.js'

const INSPECT_CONCURRENCY = 16

/**
 * One holder of a resource: a mutex's holder, a semaphore's permit, a reader or the writer; with
 * the library's `holder` (label), `since` and `lastExtended` (server time, ms since the epoch; null
 * where Redis records none).
 */
export interface Holder extends HolderInfo {
  readonly token: string
  /** Its fence where the library tells it (a mutex's holder, a writer); null otherwise. */
  readonly fence: number | null
  /** Remaining ttl in ms. */
  readonly ttl: number
  /** A read/write lock's side. */
  readonly mode?: 'read' | 'write'
  /** How many permits of a semaphore this holder has, where more than one (`permits: n`); absent: one. */
  readonly permits?: number
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

/** The permits a semaphore's row holds: each holder's (one where it says none). */
export const permitsHeld = (row: Row): number => row.holders.reduce((sum, h) => sum + (h.permits ?? 1), 0)

/** An election's leader (the public API does not show a term's token), with its label and times as `Holder`'s. */
export interface LeaderHolder extends HolderInfo {
  readonly value: string
  /** Its term. */
  readonly fence: number
  /** Proclamations in this term (0: the campaign's value). */
  readonly version: number
  readonly ttl: number
}

/** An election's line of the listing: its leader (or none), last term, candidates in line. */
export interface ElectionRow {
  readonly kind: 'election'
  readonly resource: string
  readonly holders: readonly LeaderHolder[]
  readonly fence: number | null
  readonly waiters: number
}

/** A line of the listing, of any kind. */
export type Listed = Row | ElectionRow

export function electionRow(info: ElectionInfo): ElectionRow {
  const l = info.leader
  const holders = l ? [{ value: l.value, fence: l.fence, version: l.version, ttl: l.ttl, ...facts(l) }] : []
  return { kind: 'election', resource: info.name, holders, fence: info.fence, waiters: info.candidates }
}

/** Only the facts of `HolderInfo`, in its order (an info object carries more). */
const facts = ({ holder, since, lastExtended }: HolderInfo): HolderInfo => ({ holder, since, lastExtended })

/** Whether Redis keeps anything of the row: a holder, a waiter or a last fence. */
export const exists = (row: Listed): boolean => row.holders.length > 0 || row.waiters > 0 || row.fence !== null

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

  /** The row of any kind found by a listing. */
  async listed(found: Found): Promise<Listed> {
    return found.kind === 'election' ? electionRow(await this.locks.election(found.name).inspect()) : this.row({ kind: found.kind, name: found.name })
  }

  async row({ kind, name }: { kind: Kind; name: string }): Promise<Row> {
    if (kind === 'mutex') return mutexRow(await this.locks.inspect(name))
    if (kind === 'read-write') {
      const info = await this.locks.readWrite(name).inspect()
      const writer = info.writer ? [{ token: info.writer.token, fence: info.fence, ttl: info.writer.ttl, mode: 'write' as const, ...facts(info.writer) }] : []
      const readers = info.readers.map((r) => ({ token: r.token, fence: null, ttl: r.ttl, mode: 'read' as const, ...facts(r) }))
      return { kind, resource: name, holders: [...writer, ...readers], fence: info.fence, waiters: info.waiters }
    }
    const probe = await this.#limited(1).semaphore(name, { limit: 1 }).inspect()
    // A handle of limit 1 sees slot 0 only: permits held in other slots show only under the stored limit.
    const info = probe.limit === 1 ? probe : await this.#limited(probe.limit).semaphore(name, { limit: probe.limit }).inspect()
    return {
      kind,
      resource: name,
      holders: info.permits.map((p) => ({ token: p.token, fence: null, ttl: p.ttl, ...(p.permits > 1 && { permits: p.permits }), ...facts(p) })),
      fence: info.fence,
      waiters: info.waiters,
      ...(info.held > 0 && { limit: info.limit }),
    }
  }

  /**
   * The kinds other than a mutex that Redis keeps anything of under the exact `name`: what
   * `inspect <name>` shows where the mutex of that name is free (an election, a semaphore, ...).
   */
  async others(name: string): Promise<Listed[]> {
    const rows = await Promise.all([this.listed({ kind: 'election', name }), this.row({ kind: 'semaphore', name }), this.row({ kind: 'read-write', name })])
    return rows.filter(exists)
  }

  /** Every resource matching `pattern` (all of them when `all`), else only the held or waited-for ones. */
  async rows(nodes: readonly ScanNode[], prefix: string, pattern: string | undefined, all: boolean): Promise<Listed[]> {
    const found = await findResources(nodes, prefix, pattern)
    // A bounded number of inspect calls in flight: a listing may find thousands of resources.
    const rows: Listed[] = new Array(found.length)
    let next = 0
    const worker = async () => {
      while (next < found.length) {
        const i = next++
        rows[i] = await this.listed(found[i]!)
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
  const holders = info.held && info.token !== null ? [{ token: info.token, fence: info.fence, ttl: info.ttl ?? 0, ...facts(info) }] : []
  return { kind: 'mutex', resource: info.resource, holders, fence: info.fence, waiters: info.waiters }
}

/** The one-line view of one exact mutex (as earlier versions printed it). */
export function describeLock(info: LockInfo): string {
  const fence = info.fence ?? 'none'
  return info.held
    ? `${info.resource}: held, fence ${fence}, ttl ${info.ttl} ms, ${info.waiters} waiting, token ${info.token}${heldBy(info, ', ')}`
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

/** A time Redis recorded (server ms since the epoch) as people and tools read it: ISO 8601, UTC. */
const when = (ms: number): string => new Date(ms).toISOString()

/**
 * Who holds it since when, where Redis records it: `holder "x", since <ISO>, last extended <ISO>`
 * after `separator` (the label quoted: it may hold spaces); '' where nothing is recorded.
 */
function heldBy(h: HolderInfo, separator: string): string {
  const parts = [
    ...(h.holder !== null ? [`holder ${JSON.stringify(h.holder)}`] : []),
    ...(h.since !== null ? [`since ${when(h.since)}`] : []),
    ...(h.lastExtended !== null && h.lastExtended !== h.since ? [`last extended ${when(h.lastExtended)}`] : []),
  ]
  return parts.length > 0 ? `${separator}${parts.join(', ')}` : ''
}

function holderText(h: Holder | LeaderHolder): string {
  if ('value' in h)
    return `leader ${JSON.stringify(h.value)} fence ${h.fence}${h.version > 0 ? ` version ${h.version}` : ''} ${formatTtl(h.ttl)} left${heldBy(h, ', ')}`
  const permits = h.permits !== undefined ? ` ${h.permits} permits` : ''
  return `${h.mode ? `${h.mode} ` : ''}${h.token}${h.fence !== null ? ` fence ${h.fence}` : ''}${permits} ${formatTtl(h.ttl)} left${heldBy(h, ', ')}`
}

/** The listing as an aligned table: one line per holder (a resource with none: one line with "-"). */
export function formatTable(rows: readonly Listed[], color: boolean): string {
  if (rows.length === 0) return 'no held or waited-for locks'
  const paint = painter(color)
  const head = ['KIND', 'RESOURCE', 'HOLDERS (token, fence, ttl left, holder, since, last extended)', 'LAST FENCE', 'WAITERS']
  const lines: string[][] = []
  for (const r of rows) {
    const resource = r.kind !== 'election' && r.limit !== undefined ? `${r.resource} (${permitsHeld(r)}/${r.limit})` : r.resource
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
