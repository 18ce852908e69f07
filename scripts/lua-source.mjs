// The source of a script as it is embedded and run: its .lua file with every `--#include <file>`
// line replaced by the functions of that file (relative to src/scripts) that the script uses.
// Lua has no includes; this keeps the shared queue and fence code in one place. Only the functions
// a script calls (directly or through another included function) go in: every `local function`
// statement makes a closure on every call of the script, garbage for Redis' Lua to collect.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * A library file's top-level `local function name(...) ... end` blocks (one line, or up to a line
 * `end`), each with the comment lines right above it, by name, in order.
 */
function functionsOf(source) {
  const blocks = new Map()
  const lines = source.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const m = /^local function (\w+)\(/.exec(lines[i])
    if (!m) continue
    let first = i
    while (first > 0 && lines[first - 1].startsWith('--')) first--
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
      if (used.has(name) || !new RegExp(`\\b${name}\\(`).test(text)) continue
      used.add(name)
      visit(blocks.get(name))
    }
  }
  visit(body)
  return used
}

export function luaSource(dir, file) {
  const text = readFileSync(join(dir, file), 'utf8')
  const includes = [...text.matchAll(/^--#include (\S+)\n/gm)].map((m) => m[1])
  const body = text.replace(/^--#include (\S+)\n/gm, '')
  const blocks = new Map()
  for (const lib of includes) for (const [name, block] of functionsOf(luaSource(dir, lib))) blocks.set(name, block)
  const used = usedFunctions(body, blocks)
  // In library order (a function is defined before the functions that call it), where the first include was.
  const inlined = [...blocks].filter(([name]) => used.has(name)).map(([, block]) => `${block}\n`).join('')
  return includes.length === 0 ? text : text.replace(/^--#include (\S+)\n/m, inlined).replace(/^--#include (\S+)\n/gm, '')
}
