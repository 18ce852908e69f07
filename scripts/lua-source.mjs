// The source of a script as it is embedded and run: its .lua file with every `--#include <file>`
// line replaced by the functions of that file (relative to src/lua, where the shared fragments
// live) that the script uses. Scripts live beside the code that runs them (src/primitives/<kind>/,
// src/guards/).
// Lua has no includes; this keeps the shared queue and fence code in one place. Only the functions
// a script calls (directly or through another included function) go in: every `local function`
// statement makes a closure on every call of the script, garbage for Redis' Lua to collect.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const src = join(dirname(fileURLToPath(import.meta.url)), '..', 'src')
const includeRoot = join(src, 'lua')

/** Every script's file (not the fragments under src/lua/lib/), by its file name, sorted by name. */
export function luaFiles() {
  const found = []
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) {
        if (path !== join(includeRoot, 'lib')) walk(path)
      } else if (entry.name.endsWith('.lua')) found.push({ file: entry.name, path })
    }
  }
  walk(src)
  found.sort((a, b) => (a.file < b.file ? -1 : 1))
  const names = new Set(found.map((f) => f.file))
  if (names.size !== found.length) throw new Error('Two scripts share a file name: each embedded script is named by its file')
  return found
}

/**
 * A library file's top-level `local function name(...) ... end` blocks (one line, or up to a line
 * `end`), each with the comment lines right above it and the bare `local a, b` declarations among
 * them (the state a function keeps for one run of a script), by name, in order.
 */
function functionsOf(source) {
  const blocks = new Map()
  const lines = source.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const m = /^local function (\w+)\(/.exec(lines[i])
    if (!m) continue
    let first = i
    while (first > 0 && (lines[first - 1].startsWith('--') || /^local \w+(, \w+)*$/.test(lines[first - 1]))) first--
    let last = i
    if (!/\bend$/.test(lines[i])) while (last < lines.length && lines[last] !== 'end') last++
    blocks.set(m[1], lines.slice(first, last + 1).join('\n'))
    i = last
  }
  return blocks
}

function usedFunctions(body, blocks) {
  const used = new Set()
  const visit = (text) => {
    for (const name of blocks.keys()) {
      // Called, or passed as a value (`isolated(acquireMutex, ...)` in a batch script).
      if (used.has(name) || !new RegExp(`\\b${name}\\(|[(,]\\s*${name}\\s*[,)]`).test(text)) continue
      used.add(name)
      visit(blocks.get(name))
    }
  }
  visit(body)
  return used
}

/**
 * What ships of Lua code: its lines less the whole-line comments and blank lines (a comment after
 * code stays, as does every code line as written), so that a script stays readable in a Redis
 * `SCRIPT` dump or error while its prose lives in the .lua file alone.
 */
export const shipped = (text) =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^\s*--/.test(line))
    .map((line) => `${line}\n`)
    .join('')

/**
 * The script at `path` as it ships, in parts: `head` (the name its first line gives it, `-- name`
 * without the `: what it does` that follows there, then its code before the first `--#include`), `functions` (the shipped text of each
 * library function it uses, by name, in library order: a function is defined before those that
 * call it; a function's text is the same in every script that uses it, so it can be stored once)
 * and `tail` (the rest of its code).
 */
export function luaParts(path) {
  const text = readFileSync(path, 'utf8')
  const firstLine = `${text.split('\n')[0]}\n`
  // The name tells the script in a SCRIPT dump or an error; the sentence after it stays in the
  // .lua file (in every script, it was 3 kB of a consumer's bundle of createLocks).
  const first = firstLine.replace(/^(-- [\w.-]+):.*/, '$1')
  const includes = [...text.matchAll(/^--#include (\S+)\n/gm)].map((m) => m[1])
  const at = text.search(/^--#include /m)
  const before = at < 0 ? text : text.slice(0, at)
  const after = at < 0 ? '' : text.slice(at).replace(/^--#include (\S+)\n/gm, '')
  const blocks = new Map()
  for (const lib of includes) for (const [name, block] of functionsOf(luaSource(join(includeRoot, lib)))) blocks.set(name, block)
  const used = usedFunctions(before + after, blocks)
  const functions = new Map([...blocks].filter(([name]) => used.has(name)).map(([name, block]) => [name, shipped(block)]))
  return { head: first + shipped(before.slice(firstLine.length)), functions, tail: shipped(after) }
}

/** The source of the script at `path` as it is embedded and run: its includes inlined, its comment lines left out. */
export function luaSource(path) {
  const { head, functions, tail } = luaParts(path)
  return head + [...functions.values()].join('') + tail
}
