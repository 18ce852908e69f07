// Mutation check of the safety rules: each mutant in scripts/mutants.json breaks one rule with a
// one-line change (or a few, `also`, where guards back each other up); the tests named for it
// must then fail ("killed"). A mutant whose tests still
// pass ("survived") means no test guards that rule. Never touches the working tree: the committed
// HEAD is exported (git archive) to a temporary directory with node_modules linked, and each
// mutant is applied there, tested, and undone.
//   npm run mutants                      every mutant
//   npm run mutants -- --only fence,undo mutants whose id contains one of those
//   npm run mutants -- --no-baseline     skip the unmutated run of the named tests
//   npm run mutants -- --file list.json  another list (same shape as scripts/mutants.json)
// Each mutant's tests stop at their first failure (--bail=1): one failing test kills it.
// Exit code 1 if a mutant survived or the baseline failed (its failing tests are named).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const argv = process.argv.slice(2)
const fileAt = argv.indexOf('--file')
const mutants = JSON.parse(readFileSync(fileAt >= 0 ? argv[fileAt + 1] : join(root, 'scripts', 'mutants.json'), 'utf8'))
const onlyAt = argv.indexOf('--only')
const only = onlyAt >= 0 ? argv[onlyAt + 1] : undefined
const baseline = !argv.includes('--no-baseline')
const selected = mutants.filter((m) => !only || only.split(',').some((part) => m.id.includes(part)))

const dir = mkdtempSync(join(tmpdir(), 'fencelock-mutants-'))
const run = (cmd, args, opts = {}) => spawnSync(cmd, args, { cwd: dir, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, ...opts })

/** `bail`: stop at the first failing test (a mutant is killed by one; the rest would only cost time). */
function vitest(tests, bail = false) {
  const started = performance.now()
  // One file at a time, as the tests start their own redis-server processes (2 cores). Both
  // projects: a file of the with-glide project (vitest.config.ts) is in no other, and a mutant's
  // tests named there would otherwise not run at all.
  const r = run('npx', ['vitest', 'run', '--project', 'fencelock', '--project', 'with-glide', '--maxWorkers=1', ...(bail ? ['--bail=1'] : []), ...tests], {
    // The export sits in a temporary folder: the server builds (harness/servers.ts) stay beside the checkout.
    env: { ...process.env, FORCE_COLOR: '0', FENCELOCK_SERVERS_DIR: process.env.FENCELOCK_SERVERS_DIR ?? join(root, '..', 'shared', 'servers') },
  })
  const out = (r.stdout + r.stderr).replace(/\x1b\[[0-9;]*m/g, '')
  const failed = /Tests\s+(\d+) failed/.exec(out)?.[1]
  // The first failing test, as evidence that the kill came from an assertion and not a crash.
  const first = /(?:FAIL|×)\s+(.+)/.exec(out)?.[1]?.trim() ?? null
  // Every failing test by name (vitest's summary lines: FAIL file > describe > test).
  const failures = [...new Set([...out.matchAll(/^\s*FAIL\s+(.+)$/gm)].map((m) => m[1].trim()))]
  return {
    pass: r.status === 0,
    failed: failed ? Number(failed) : r.status === 0 ? 0 : null,
    first,
    failures,
    seconds: Math.round((performance.now() - started) / 1000),
    out,
  }
}

try {
  const archive = spawnSync('sh', ['-c', `git -C "${root}" archive HEAD | tar -x -C "${dir}"`], { encoding: 'utf8' })
  if (archive.status !== 0) throw new Error(`git archive failed: ${archive.stderr}`)
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'))
  const commit = spawnSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim()
  console.log(`mutants: ${selected.length} of ${mutants.length}, against HEAD ${commit} exported to a temporary directory`)
  const embed = () => {
    const r = run('node', ['scripts/embed-lua.mjs'])
    if (r.status !== 0) throw new Error(`embed failed: ${r.stderr}`)
  }
  embed()

  let broken = false
  if (baseline) {
    const tests = [...new Set(selected.flatMap((m) => m.tests))]
    const base = vitest(tests)
    console.log(`baseline (no mutant): ${tests.length} test files ${base.pass ? 'pass' : 'FAIL'} in ${base.seconds} s`)
    if (!base.pass) {
      // Which tests failed without any mutant: a mutant's kill by one of them proves nothing.
      console.log(`baseline failures (${base.failures.length}):`)
      for (const name of base.failures) console.log(`  ${name}`)
      if (base.failures.length === 0) console.log(base.out.slice(-4000))
      broken = true
    }
  }

  const rows = []
  for (const m of selected) {
    // A mutant is one edit, or more (`also`: further edits, each in `file` or the mutant's own)
    // where a rule is kept by guards that back each other up, so that one removed alone is not a
    // broken rule. Every edit's search text must be found exactly once.
    const edits = [{ file: m.file, search: m.search, replace: m.replace }, ...(m.also ?? []).map((e) => ({ file: m.file, ...e }))]
    const originals = new Map()
    let missing
    for (const edit of edits) {
      const path = join(dir, edit.file)
      if (!originals.has(path)) originals.set(path, readFileSync(path, 'utf8'))
      const parts = readFileSync(path, 'utf8').split(edit.search)
      if (parts.length !== 2) {
        missing = `NOT APPLIED (search text in ${edit.file} found ${parts.length - 1} times)`
        break
      }
      writeFileSync(path, parts.join(edit.replace))
    }
    const lua = edits.some((e) => e.file.endsWith('.lua'))
    try {
      if (missing) {
        rows.push({ ...m, outcome: missing, seconds: 0 })
        broken = true
        continue
      }
      if (lua) embed()
      const r = vitest(m.tests, true)
      const outcome = r.pass ? 'SURVIVED' : 'killed'
      if (r.pass) broken = true
      rows.push({ ...m, outcome, seconds: r.seconds, first: r.first })
      console.log(`${m.id}: ${outcome}, ${r.seconds} s${r.first ? `; first failure: ${r.first}` : ''}`)
      if (!r.pass && r.failed === null) console.log(r.out.slice(-1500))
    } finally {
      for (const [path, text] of originals) writeFileSync(path, text)
      if (lua) embed()
    }
  }

  console.log('\n| mutant | file | change | tests | outcome | time |\n|---|---|---|---|---|---|')
  for (const r of rows) {
    const more = r.also?.length ? ` (and ${r.also.length} more)` : ''
    const change = `\`${r.search.trim().split('\n').pop()}\` → \`${r.replace.trim().split('\n').pop()}\`${more}`
    console.log(`| ${r.id} | ${r.file} | ${change.replace(/\|/g, '\\|')} | ${r.tests.join(', ')} | ${r.outcome} | ${r.seconds} s |`)
  }
  const survived = rows.filter((r) => r.outcome === 'SURVIVED').length
  const killed = rows.filter((r) => r.outcome === 'killed').length
  const notApplied = rows.length - killed - survived
  console.log(`\nmutants: ${killed} of ${rows.length} killed${survived ? `, ${survived} SURVIVED` : ''}${notApplied ? `, ${notApplied} NOT APPLIED` : ''}`)
  process.exitCode = broken ? 1 : 0
} finally {
  rmSync(dir, { recursive: true, force: true })
}
