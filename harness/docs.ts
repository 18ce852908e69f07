// The Markdown pages of the repository (README.md, the guides in docs/ and the evidence under
// docs/evidence/), read the way GitHub renders them: their headings and anchors, their relative
// links, and one section by its heading, wherever it lives. Tests that hold a page to the code read
// the section through `docSection`, so a section can move from README to a guide without the test.
import { readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const repoRoot = fileURLToPath(new URL('..', import.meta.url))

/** README.md and every .md under docs/ (docs/api, the generated reference, left out), relative to the repository. */
export function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(path.join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) => {
      const file = `${dir}/${entry.name}`
      if (entry.isDirectory()) return file === 'docs/api' ? [] : walk(file)
      return entry.name.endsWith('.md') ? [file] : []
    })
  return ['README.md', ...walk('docs').sort()]
}

/** The lines of a page with fenced code blocks blanked, so a `# comment` in a shell block is no heading. */
export function proseLines(text: string): string[] {
  let fence: string | undefined
  return text.split('\n').map((line) => {
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line)
    if (fence === undefined && open) {
      fence = open[1]!
      return ''
    }
    if (fence !== undefined) {
      if (line.trimStart().startsWith(fence)) fence = undefined
      return ''
    }
    return line
  })
}

const HEADING = /^(#{1,6}) +(.*?) *#* *$/

/** GitHub's anchor of a heading's text: markup dropped, lower case, punctuation gone, spaces to hyphens. */
export function slugOf(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link or an image: its text
    .replace(/<[^>]+>/g, '') // inline HTML
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')
}

/** Every anchor of a page, as GitHub makes them (a repeated heading gets `-1`, `-2`, ...). */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of proseLines(text)) {
    const heading = HEADING.exec(line)
    if (!heading) continue
    const slug = slugOf(heading[2]!)
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    anchors.add(n === 0 ? slug : `${slug}-${n}`)
  }
  for (const id of text.matchAll(/<a (?:name|id)="([^"]+)"/g)) anchors.add(id[1]!)
  return anchors
}

/** The relative links and images of a page (`[text](target)`), outside code; not http(s) or mailto. */
export function relativeLinksOf(text: string): { line: number; target: string }[] {
  const links: { line: number; target: string }[] = []
  for (const [i, line] of proseLines(text).entries()) {
    // Inline code is no link: `[x](y)` inside backticks stays text.
    const prose = line.replace(/`[^`]*`/g, '')
    for (const link of prose.matchAll(/\]\(([^)\s]+)(?: "[^"]*")?\)/g)) {
      const target = link[1]!
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue
      links.push({ line: i + 1, target })
    }
  }
  return links
}

/**
 * The section under `heading` (the whole line, e.g. `'### Telemetry'`), up to the next heading of
 * the same or a higher level, from whichever of README.md and docs/**.md has it. Throws if no page
 * or more than one page has that heading: a test must know which text it reads.
 */
export function docSection(heading: string): string {
  const level = /^#+/.exec(heading)?.[0].length
  if (!level) throw new Error(`docSection: ${JSON.stringify(heading)} is not a Markdown heading`)
  const found = markdownFiles().flatMap((file) => {
    const text = readFileSync(path.join(repoRoot, file), 'utf8')
    const lines = text.split('\n')
    const prose = proseLines(text)
    const start = prose.findIndex((line) => line.trimEnd() === heading)
    if (start === -1) return []
    const end = prose.findIndex((line, i) => i > start && (/^(#+) /.exec(line)?.[1]?.length ?? Infinity) <= level)
    return [{ file, text: lines.slice(start, end === -1 ? undefined : end).join('\n') }]
  })
  if (found.length !== 1)
    throw new Error(`docSection: ${JSON.stringify(heading)} is in ${found.length} pages (${found.map((f) => f.file).join(', ')}); expected one`)
  return found[0]!.text
}
