// Runs the SPIN models in model/: for each model and each broken variant, `spin -a`, `gcc`, `./pan`
// in a temporary directory; prints states explored and time, and for a counterexample its trail
// replayed with `spin -t` (the model's printf lines: which client did what, when).
//   npm run model                 bounded configurations (the ones npm test runs)
//   npm run model -- --full       larger bounds (minutes to hours)
//   npm run model -- --json       one JSON line per run, for test/model/model.test.ts
//   npm run model -- --only quorum/     runs whose id starts with that (--id: exactly that one)
// A correct model must verify with no error; each broken variant must fail. Exit code 1 otherwise.
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const modelDir = join(root, 'model')

/**
 * Each run: a model file, its -D flags in the bounded run (npm test), and whether SPIN must find
 * an error. Under --full a correct model runs with `full` instead of `defines` (larger bounds).
 */
export const runs = [
  { id: 'single', file: 'single.pml', defines: [], expect: 'pass', full: ['MAXT=8', 'SUSPENDS=1', 'EXTEND'] },
  { id: 'single/NO_RELEASE_TOKEN', file: 'single.pml', defines: ['NO_RELEASE_TOKEN'], expect: 'fail', rule: 'release compares the token' },
  { id: 'single/NO_EXTEND_TOKEN', file: 'single.pml', defines: ['NO_EXTEND_TOKEN', 'EXTEND'], expect: 'fail', rule: 'extend compares the token' },
  { id: 'single/COUNTER_FENCE', file: 'single.pml', defines: ['COUNTER_FENCE'], expect: 'fail', rule: 'fence floored by server TIME' },
  { id: 'single/NO_PLUS_ONE', file: 'single.pml', defines: ['NO_PLUS_ONE'], expect: 'fail', rule: 'fence = last + 1 when TIME has not moved' },
  { id: 'single/FROM_REPLY', file: 'single.pml', defines: ['FROM_REPLY'], expect: 'fail', rule: 'validity counted from before sending' },
  { id: 'single/NO_DRIFT', file: 'single.pml', defines: ['NO_DRIFT'], expect: 'fail', rule: 'drift margin' },
  { id: 'single/NO_CLAIM', file: 'single.pml', defines: ['NO_CLAIM'], expect: 'fail', rule: 'claim before read (read-modify-write)' },
  // The bounded run checks the quorum twice, with clock drift and no restart, and with a restart
  // and no drift; --full checks both at once, and the restart case with a step per node. Each
  // broken variant runs with only the faults its counterexample needs (a smaller search).
  { id: 'quorum/drift', file: 'quorum.pml', defines: ['RESTARTS=0'], expect: 'pass', full: [] },
  { id: 'quorum/restart', file: 'quorum.pml', defines: ['DRIFT=0', 'RESTART_NODES=2'], expect: 'pass', full: ['PER_NODE'] },
  {
    id: 'quorum/NO_WRITEBACK',
    file: 'quorum.pml',
    defines: ['NO_WRITEBACK', 'RESTARTS=0', 'DRIFT=0'],
    expect: 'fail',
    rule: 'fence written back to the majority',
  },
  { id: 'quorum/NO_RESTART_EXCL', file: 'quorum.pml', defines: ['NO_RESTART_EXCL', 'DRIFT=0'], expect: 'fail', rule: 'restarted node excluded for maxTtl' },
  { id: 'quorum/COUNTER_FENCE', file: 'quorum.pml', defines: ['COUNTER_FENCE', 'DRIFT=0'], expect: 'fail', rule: 'fence floored by server TIME' },
  {
    id: 'quorum/NO_RELEASE_TOKEN',
    file: 'quorum.pml',
    defines: ['NO_RELEASE_TOKEN', 'ROUNDS=2', 'RESTARTS=0', 'DRIFT=0'],
    expect: 'fail',
    rule: 'release and undo compare the token',
  },
  { id: 'quorum/FROM_REPLY', file: 'quorum.pml', defines: ['FROM_REPLY', 'RESTARTS=0'], expect: 'fail', rule: 'validity counted from before sending' },
  { id: 'quorum/NO_DRIFT', file: 'quorum.pml', defines: ['NO_DRIFT', 'RESTARTS=0'], expect: 'fail', rule: 'drift margin' },
  {
    id: 'quorum/MAJ_CEIL',
    file: 'quorum.pml',
    defines: ['MAJ_CEIL', 'N=4', 'RESTARTS=0', 'DRIFT=0'],
    expect: 'fail',
    rule: 'majority = floor(n/2) + 1 (4 nodes)',
  },
  { id: 'semaphore', file: 'semaphore.pml', defines: [], expect: 'pass', full: ['ROUNDS=2'] },
  // All-or-nothing waiters on a quorum: one queue order on every node (issue 45's stall otherwise).
  { id: 'quorum-queue', file: 'quorum-queue.pml', defines: [], expect: 'pass' },
  {
    id: 'quorum-queue/LOCAL_ORDER',
    file: 'quorum-queue.pml',
    defines: ['LOCAL_ORDER'],
    expect: 'fail',
    rule: "a waiter's queue place carries one score on every node",
  },
  { id: 'semaphore/NAIVE_COUNT', file: 'semaphore.pml', defines: ['NAIVE_COUNT'], expect: 'fail', rule: 'a permit is a slot, each slot a quorum mutex' },
  // fair: false (barging bounded by the pass count), weighted permits, a fair caller among them.
  { id: 'semaphore-passes', file: 'semaphore-passes.pml', defines: ['LIMIT=3', 'ROUNDS=3'], expect: 'pass', full: ['NCLIENTS=4', 'LIMIT=3', 'ROUNDS=3'] },
  {
    id: 'semaphore-passes/NO_PASS_BOUND',
    file: 'semaphore-passes.pml',
    defines: ['NO_PASS_BOUND'],
    expect: 'fail',
    rule: 'the first in line is passed at most MAX_PASSES times',
  },
  {
    id: 'semaphore-passes/PASS_ONE_FREE',
    file: 'semaphore-passes.pml',
    defines: ['PASS_ONE_FREE'],
    expect: 'fail',
    rule: 'a pass takes all its permits or none',
  },
  {
    id: 'semaphore-passes/RESET_ANY_IN_TURN',
    file: 'semaphore-passes.pml',
    defines: ['RESET_ANY_IN_TURN', 'LIMIT=3', 'ROUNDS=3'],
    expect: 'fail',
    rule: 'only serving the first in line resets the pass count',
  },
]

function which(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).status === 0
}

/** What is missing to run the models ('' when spin and gcc are both on PATH). */
export function missingTools() {
  return ['spin', 'gcc'].filter((cmd) => !which(cmd)).join(', ')
}

function sh(cmd, args, cwd, timeoutMs) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs })
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`)
  return r
}

const number = (text, re) => {
  const m = re.exec(text)
  return m ? Number(m[1]) : null
}

/** Builds and runs one verifier; returns states, time and, for an error, the replayed trail. */
export function runOne(run, { full = false, timeoutMs = 30 * 60_000 } = {}) {
  const defines = full && run.full ? run.full : run.defines
  const dir = mkdtempSync(join(tmpdir(), 'fencelock-model-'))
  try {
    copyFileSync(join(modelDir, run.file), join(dir, run.file))
    const dflags = defines.map((d) => `-D${d}`)
    const started = performance.now()
    const gen = sh('spin', ['-a', ...dflags, run.file], dir)
    if (gen.status !== 0) throw new Error(`spin -a failed for ${run.id}:\n${gen.stdout}${gen.stderr}`)
    // -DSAFETY: only safety properties (assertions) are checked; -w: the warnings gcc gives on
    // SPIN's generated code are not ours.
    // --full: -DCOLLAPSE stores states compressed (about a third of the memory, somewhat slower).
    const cc = sh('gcc', ['-O2', '-w', '-DSAFETY', '-DMEMLIM=8000', ...(full ? ['-DCOLLAPSE'] : []), '-o', 'pan', 'pan.c'], dir)
    if (cc.status !== 0) throw new Error(`gcc failed for ${run.id}:\n${cc.stderr}`)
    // -E: blocked processes at the end are not errors here (time stops at MAXT); -m: depth bound
    // far above the models' depth; -n: no list of unreached code.
    const pan = sh('./pan', ['-E', '-n', '-m100000'], dir, timeoutMs)
    const seconds = (performance.now() - started) / 1000
    const out = pan.stdout + pan.stderr
    const errors = number(out, /errors: (\d+)/)
    const result = {
      id: run.id,
      defines,
      expect: run.expect,
      rule: run.rule ?? null,
      states: number(out, /([\d.e+]+) states, stored/),
      depth: number(out, /depth reached (\d+)/),
      panSeconds: number(out, /elapsed time ([\d.e+]+)/),
      seconds: Math.round(seconds * 100) / 100,
      errors,
      violated: (/assertion violated (.*) \(at depth/.exec(out) ?? [])[1] ?? null,
      trail: null,
      ok: false,
    }
    if (errors === null) throw new Error(`pan gave no result for ${run.id} (timed out or crashed):\n${out.slice(-2000)}`)
    // A search cut short (memory limit, depth bound) proves nothing: report it, never as verified.
    const incomplete = /out of memory|max search depth too small|aborting/i.exec(out)?.[0]
    if (incomplete) throw new Error(`pan did not finish the search for ${run.id} (${incomplete}); ${number(out, /([\d.e+]+) states, stored/)} states stored`)
    if (errors > 0 && readdirSync(dir).some((f) => f.endsWith('.trail'))) {
      const replay = sh('spin', ['-t', ...dflags, run.file], dir)
      // The model's printf lines come first; spin's own report starts at the first 'spin:' line.
      const lines = replay.stdout.split('\n')
      const end = lines.findIndex((line) => line.startsWith('spin:'))
      result.trail = lines
        .slice(0, end < 0 ? lines.length : end)
        .map((line) => line.trim())
        .filter((line) => line !== '')
    }
    result.ok = run.expect === 'pass' ? errors === 0 : errors > 0
    return result
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function main() {
  const argv = process.argv.slice(2)
  const full = argv.includes('--full')
  const json = argv.includes('--json')
  const onlyAt = argv.indexOf('--only')
  const only = onlyAt >= 0 ? argv[onlyAt + 1] : undefined
  const idAt = argv.indexOf('--id')
  const id = idAt >= 0 ? argv[idAt + 1] : undefined
  const missing = missingTools()
  if (missing) {
    console.error(`model: ${missing} not found on PATH (apt-get install spin gcc)`)
    process.exit(2)
  }
  let failed = 0
  for (const run of runs.filter((r) => (!only || r.id.startsWith(only)) && (!id || r.id === id))) {
    let result
    try {
      result = runOne(run, { full })
    } catch (err) {
      failed++
      if (json) console.log(JSON.stringify({ id: run.id, ok: false, error: String(err?.message ?? err) }))
      else console.log(`${run.id}: ERROR ${err?.message ?? err}`)
      continue
    }
    if (!result.ok) failed++
    if (json) {
      console.log(JSON.stringify(result))
      continue
    }
    const flags = result.defines.length ? ` (-D${result.defines.join(' -D')})` : ''
    const verdict =
      result.expect === 'pass'
        ? result.errors === 0
          ? 'verified, no errors'
          : `FAILED: ${result.errors} error(s), expected none`
        : result.errors > 0
          ? `counterexample found, as it must (rule removed: ${result.rule})`
          : `NO COUNTEREXAMPLE: the broken variant verified (rule: ${result.rule})`
    console.log(`${result.id}${flags}: ${verdict}; ${result.states} states, depth ${result.depth}, ${result.seconds} s`)
    if (result.trail) {
      if (result.violated) console.log(`  assertion violated: ${result.violated}`)
      for (const line of result.trail) console.log(`    ${line}`)
    }
  }
  if (!json) console.log(failed === 0 ? 'model: all results as expected' : `model: ${failed} result(s) not as expected`)
  process.exit(failed === 0 ? 0 : 1)
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main()
