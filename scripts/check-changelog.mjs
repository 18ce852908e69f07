// prepublishOnly: a published version has its dated CHANGELOG section on top. Until then its
// changes stand under `## Unreleased`, which publishing renames `## <version> - YYYY-MM-DD`.
// Usage: node scripts/check-changelog.mjs [CHANGELOG.md]
import { readFileSync } from 'node:fs'

const file = process.argv[2] ?? 'CHANGELOG.md'
const { version } = JSON.parse(readFileSync('package.json', 'utf8'))
const first = readFileSync(file, 'utf8').match(/^## .*$/m)?.[0]
const wanted = new RegExp(`^## ${version.replaceAll('.', '\\.')} - \\d{4}-\\d{2}-\\d{2}$`)
if (!first || !wanted.test(first)) {
  console.error(
    `${file}: the first section is ${JSON.stringify(first ?? null)}; before publishing ${version}, rename it "## ${version} - YYYY-MM-DD" (today's date)`,
  )
  process.exit(1)
}
