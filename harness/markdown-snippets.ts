// The fenced code blocks of the Markdown docs, for test/package/docs-snippets.test.ts. A block may be
// preceded by one directive comment, invisible on the rendered page:
//   <!-- snippet: prelude NAME -->              test/package/docs-snippets/NAME.ts goes around the block
//                                               (its `// @snippet` line is replaced by the block)
//   <!-- snippet: check-only: REASON -->        type-checked, never run (REASON says why)
// Both may be given, separated by `;`. Anything else after `snippet:` is an error, not ignored.
import { readFileSync } from 'node:fs'
import path from 'node:path'

export interface Snippet {
  /** `README.md:16`: the file (relative to the repository) and the line of the opening fence. */
  where: string
  lang: string
  code: string
  prelude?: string
  /** Why the block is only type-checked; undefined for a block that runs. */
  checkOnly?: string
}

const FENCE = /^```(\S*).*$/
const DIRECTIVE = /^<!--\s*snippet:(.*?)-->\s*$/

export function snippetsOf(root: string, file: string): Snippet[] {
  const lines = readFileSync(path.join(root, file), 'utf8').split('\n')
  const snippets: Snippet[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!)
    if (!open) continue
    const close = lines.findIndex((line, j) => j > i && line.startsWith('```'))
    if (close === -1) throw new Error(`${file}:${i + 1}: a code block that never closes`)
    const snippet: Snippet = { where: `${file}:${i + 1}`, lang: open[1]!, code: `${lines.slice(i + 1, close).join('\n')}\n` }
    const directive = i > 0 ? DIRECTIVE.exec(lines[i - 1]!) : null
    for (const item of directive ? directive[1]!.split(';').map((s) => s.trim()) : []) {
      const prelude = /^prelude ([\w-]+)$/.exec(item)
      const checkOnly = /^check-only: (\S.*)$/.exec(item)
      if (prelude) snippet.prelude = prelude[1]!
      else if (checkOnly) snippet.checkOnly = checkOnly[1]!
      else throw new Error(`${file}:${i}: unknown snippet directive ${JSON.stringify(item)}; expected "prelude NAME" or "check-only: REASON"`)
    }
    snippets.push(snippet)
    i = close
  }
  return snippets
}

/** The block inside its prelude, if it has one: one module, ready to check or run. */
export function moduleOf(root: string, snippet: Snippet): string {
  if (!snippet.prelude) return snippet.code
  const file = path.join(root, 'test', 'package', 'docs-snippets', `${snippet.prelude}.ts`)
  const prelude = readFileSync(file, 'utf8').replace(/^\/\/ @ts-nocheck.*\n/, '')
  const parts = prelude.split(/^\/\/ @snippet\n/m)
  if (parts.length !== 2) throw new Error(`${file}: needs exactly one "// @snippet" line, found ${parts.length - 1}`)
  return `${parts[0]}${snippet.code}${parts[1]}`
}
