// Every mutant of `npm run mutants` (scripts/mutants.json) still applies: each of its edits' search
// texts is found exactly once in its file. A move or rewrite of the code a mutant breaks would
// otherwise leave it "NOT APPLIED" until the next full mutants run, and the rule it guards
// unproven meanwhile (five were found stale that way on 7 December).
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))

interface Edit {
  file?: string
  search: string
}
interface Mutant extends Edit {
  id: string
  file: string
  also?: Edit[]
}

const mutants = JSON.parse(readFileSync(path.join(root, 'scripts/mutants.json'), 'utf8')) as Mutant[]

describe('mutants apply', () => {
  it('has mutants to check', () => {
    expect(mutants.length).toBeGreaterThan(40)
  })
  it("every edit's search text is found exactly once in its file", () => {
    const stale: string[] = []
    for (const m of mutants) {
      for (const edit of [m, ...(m.also ?? [])]) {
        const file = edit.file ?? m.file
        const found = readFileSync(path.join(root, file), 'utf8').split(edit.search).length - 1
        if (found !== 1) stale.push(`${m.id}: ${file} has its search text ${found} times`)
      }
    }
    expect(stale).toEqual([])
  })
})
