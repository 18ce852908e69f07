// Every relative link of README.md and docs/**/*.md leads somewhere: the file (or folder) exists,
// and a `#anchor` names a heading of that page (GitHub's anchors). A guide that moves, a heading
// that is renamed or evidence that is regenerated cannot leave a dead link behind.
import { existsSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { anchorsOf, docSection, markdownFiles, proseLines, relativeLinksOf, repoRoot, slugOf } from '../../harness/docs.js'

const pages = markdownFiles()
const read = (file: string) => readFileSync(path.join(repoRoot, file), 'utf8')

/** What is wrong with one link of `page`, or undefined when it resolves. */
function brokenLink(page: string, target: string): string | undefined {
  const [pathPart = '', anchor] = target.split('#', 2)
  const file = pathPart === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), decodeURIComponent(pathPart)))
  if (file.startsWith('..')) return 'leaves the repository'
  const absolute = path.join(repoRoot, file)
  if (!existsSync(absolute)) return `${file} does not exist`
  if (anchor === undefined || anchor === '') return undefined
  if (statSync(absolute).isDirectory() || !file.endsWith('.md')) return `#${anchor} on ${file}, which is no Markdown page`
  return anchorsOf(read(file)).has(decodeURIComponent(anchor)) ? undefined : `${file} has no heading for #${anchor}`
}

describe('documentation links', () => {
  it('finds README.md, the guides and the evidence', () => {
    expect(pages).toContain('README.md')
    expect(pages.filter((p) => p.startsWith('docs/evidence/')).length).toBeGreaterThan(0)
    expect(pages.filter((p) => /^docs\/[^/]+\.md$/.test(p)).length).toBeGreaterThan(0)
  })

  it('README.md is one sitting: at most 15 KB, and its contents list links every section', () => {
    const readme = read('README.md')
    // The READMEs of the libraries users come from are 9-16 KB; the rest belongs in a guide.
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(15 * 1024)
    const sections = proseLines(readme).flatMap((line) => (/^## (.*)$/.exec(line) ? [slugOf(line.slice(3))] : []))
    const listed = new Set(relativeLinksOf(readme).flatMap(({ target }) => (target.startsWith('#') ? [target.slice(1)] : [])))
    expect(sections.filter((anchor) => !listed.has(anchor))).toEqual([])
  })

  it.each(pages)('%s: every relative link and anchor resolves', (page) => {
    const broken = relativeLinksOf(read(page)).flatMap(({ line, target }) => {
      const why = brokenLink(page, target)
      return why ? [`${page}:${line}: (${target}) ${why}`] : []
    })
    expect(broken).toEqual([])
  })

  it('makes anchors as GitHub does, and finds a section by its heading wherever it lives', () => {
    expect(slugOf('locks.semaphore(name, { limit })')).toBe('lockssemaphorename--limit-')
    expect(slugOf('Weighted permits: `permits: n`')).toBe('weighted-permits-permits-n')
    expect(slugOf('From [node-redlock](https://github.com/mike-marcacci/node-redlock)')).toBe('from-node-redlock')
    expect([...anchorsOf('# A\n```sh\n# not a heading\n```\n## A\n')]).toEqual(['a', 'a-1'])
    expect(docSection('## Telemetry')).toMatch(/^## Telemetry\n[\s\S]*`fencelock:acquire`/)
    expect(() => docSection('## Command line')).toThrow(/in 2 pages \(README\.md, docs\/election\.md\)/)
    // `fencelock --help` sends users of the package, who have no docs/, to this section of README.md.
    expect(anchorsOf(read('README.md'))).toContain('command-line')
    expect(() => docSection('## No such heading anywhere')).toThrow(/in 0 pages/)
  })
})
