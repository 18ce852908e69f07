// The per-server section of docs/evidence/benchmark.md (written by `npm run bench:servers`, bench/servers.ts),
// kept when a full `npm run bench` writes the rest of the page again.
import { existsSync, readFileSync } from 'node:fs'

export const SERVERS_BEGIN = '<!-- servers:begin -->'
export const SERVERS_END = '<!-- servers:end -->'

/** `text` with `section` in place of its per-server section, or after it when it has none. */
export function spliceServers(text: string, section: string | undefined): string {
  if (!section) return text
  const at = text.indexOf(SERVERS_BEGIN)
  if (at < 0) return `${text.trimEnd()}\n\n${section}\n`
  return `${text.slice(0, at)}${section}${text.slice(text.indexOf(SERVERS_END) + SERVERS_END.length)}`
}

/** The per-server section the page at `doc` has now, if any. */
export function serversSection(doc: string): string | undefined {
  if (!existsSync(doc)) return undefined
  const text = readFileSync(doc, 'utf8')
  const at = text.indexOf(SERVERS_BEGIN)
  const end = text.indexOf(SERVERS_END)
  return at >= 0 && end > at ? text.slice(at, end + SERVERS_END.length) : undefined
}
