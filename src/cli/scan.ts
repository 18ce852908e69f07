// Finds the resources under a prefix by reading fencelock's own key layout with SCAN (never KEYS,
// which blocks the server): every node of a quorum, every master of a cluster. The layout is the
// primitives' (src/primitives/mutex/mutex.ts, semaphore.ts, rw-lock.ts): every key of a resource is
// `<prefix>{<name>}:` followed by the kind's part:
//   mutex       L (holder), F (fence), Q (queue), X (queue expiry)
//   semaphore   S:F, S:Q, S:X, S:N (limit), S:<i> (permit slot i)
//   read/write  R:L (writer), R:D (readers), R:H (readers' holders), R:F, R:Q, R:X
//   election    E:L (leader's lease), E:F, E:Q, E:X, E:T (term: fence, version, value)
// (an all-or-nothing lock of several resources holds each resource's mutex keys). A test checks
// this parser against the library's key builders.

/** What can be held, released and forced by token. */
export type Kind = 'mutex' | 'semaphore' | 'read-write'
/** What a listing shows: the kinds that can be held, and elections. */
export type FoundKind = Kind | 'election'

/** One Redis node that SCAN can walk (a quorum node, or one master of a cluster). */
export interface ScanNode {
  /** One SCAN step: the next cursor ('0' when done) and the keys of this step. */
  scan(cursor: string, match: string, count: number): Promise<[string, string[]]>
}

export interface Found {
  readonly kind: FoundKind
  readonly name: string
}

const KEY = /^\{(.*)\}:(?:(L|F|Q|X)|S:(F|Q|X|N|\d+)|R:(L|D|H|F|Q|X)|E:(L|F|Q|X|T))$/s

/** The kind and name a key of fencelock's belongs to, or undefined for any other key. */
export function parseKey(prefix: string, key: string): Found | undefined {
  if (!key.startsWith(prefix)) return undefined
  const match = KEY.exec(key.slice(prefix.length))
  if (!match) return undefined
  const [, name, mutex, semaphore, readWrite] = match
  return { kind: mutex ? 'mutex' : semaphore ? 'semaphore' : readWrite ? 'read-write' : 'election', name: name! }
}

/** `text` with Redis glob characters escaped, so it matches itself only. */
export const escapeGlob = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&')

/**
 * A JavaScript test for a Redis glob (`*`, `?`, `[abc]`, `[^a]`, `[a-z]`, `\x`), to filter the
 * names SCAN found: MATCH sees whole keys, so `{a*}` could also match inside a longer name.
 */
export function globTest(glob: string): (name: string) => boolean {
  let source = ''
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!
    if (c === '*') source += '.*'
    else if (c === '?') source += '.'
    else if (c === '\\' && i + 1 < glob.length) source += escapeRegExp(glob[++i]!)
    else if (c === '[') {
      const end = glob.indexOf(']', i + 2)
      if (end === -1) source += '\\['
      else {
        let body = glob.slice(i + 1, end)
        const negate = body.startsWith('^')
        if (negate) body = body.slice(1)
        source += `[${negate ? '^' : ''}${body.replace(/[\\\]]/g, '\\$&')}]`
        i = end
      }
    } else source += escapeRegExp(c)
  }
  const re = new RegExp(`^${source}$`, 's')
  return (name) => re.test(name)
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * Every resource with a key under `prefix` whose name matches `pattern` (a Redis glob; default
 * every name), one entry per kind and name, sorted by name then kind. Walks each node with SCAN
 * in steps of `count` keys.
 */
export async function findResources(nodes: readonly ScanNode[], prefix: string, pattern = '*', count = 1_000): Promise<Found[]> {
  const match = `${escapeGlob(prefix)}{${pattern}}:*`
  const wanted = globTest(pattern)
  const found = new Map<string, Found>()
  await Promise.all(
    nodes.map(async (node) => {
      let cursor = '0'
      do {
        const [next, keys] = await node.scan(cursor, match, count)
        for (const key of keys) {
          const hit = parseKey(prefix, key)
          if (hit && wanted(hit.name)) found.set(`${hit.kind}\u0000${hit.name}`, hit)
        }
        cursor = next
      } while (cursor !== '0')
    }),
  )
  const order: Record<FoundKind, number> = { mutex: 0, semaphore: 1, 'read-write': 2, election: 3 }
  return [...found.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : order[a.kind] - order[b.kind]))
}
