// Short named steps (STYLE.md): no function in src/, verify/ or bench/ runs over 60 lines of its
// own body, or over 100 with the functions nested in it. Measured with the TypeScript parser.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const OWN = 60
const WITH_NESTED = 100

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : walk(p)
    return /\.(ts|mts)$/.test(e.name) && !e.name.endsWith('.d.ts') && !e.name.endsWith('.d.mts') && e.name !== 'embedded.ts' ? [p] : []
  })
}

interface Span {
  name: string
  total: number
  own: number
}

/** Every function-like node with its line count, and its count less the lines of the functions nested in it. */
function functionSpans(file: string, text: string): Span[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const spans: Span[] = []
  const lines = (node: ts.Node) =>
    source.getLineAndCharacterOfPosition(node.getEnd()).line - source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1
  const nameOf = (node: ts.Node): string => {
    const named = node as ts.Node & { name?: ts.Node }
    if (named.name) return named.name.getText(source)
    const parent = node.parent
    if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText(source)
    if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(source)
    return `(anonymous at line ${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1})`
  }
  const visit = (node: ts.Node): number => {
    // Returns the lines of function bodies directly nested below `node` (to subtract from the owner).
    let nested = 0
    ts.forEachChild(node, (child) => {
      if (ts.isFunctionLike(child) && (child as ts.FunctionLikeDeclaration).body) {
        const total = lines(child)
        const inner = visit(child)
        spans.push({ name: nameOf(child), total, own: total - inner })
        nested += total
      } else nested += visit(child)
    })
    return nested
  }
  visit(source)
  return spans
}

describe('short named steps', () => {
  const files = ['src', 'verify', 'bench'].flatMap((d) => walk(path.join(root, d)))
  it(`no function over ${OWN} lines of its own, or ${WITH_NESTED} with its nested helpers`, () => {
    const long: string[] = []
    for (const file of files) {
      for (const span of functionSpans(file, readFileSync(file, 'utf8'))) {
        if (span.own > OWN || span.total > WITH_NESTED) long.push(`${path.relative(root, file)}: ${span.name} (${span.own} own, ${span.total} with nested)`)
      }
    }
    expect(long).toEqual([])
  })
})
